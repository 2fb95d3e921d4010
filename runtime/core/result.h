// Result<T>: a value or an Error, without exceptions or heap.
#pragma once

#include <new>
#include <utility>

#include "runtime/core/error.h"

namespace pteron {

template <typename T>
class Result {
 public:
  Result(T value) : ok_(true) { new (&storage_.value) T(std::move(value)); }  // NOLINT
  Result(Error error) : ok_(false) {
    storage_.error = error == Error::Ok ? Error::Internal : error;
  }  // NOLINT
  Result(Result&& other) noexcept : ok_(other.ok_) {
    if (ok_)
      new (&storage_.value) T(std::move(other.storage_.value));
    else
      storage_.error = other.storage_.error;
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() {
    if (ok_) storage_.value.~T();
  }

  bool ok() const { return ok_; }
  Error error() const { return ok_ ? Error::Ok : storage_.error; }
  T& get() { return storage_.value; }
  const T& get() const { return storage_.value; }
  T& operator*() { return storage_.value; }
  T* operator->() { return &storage_.value; }

 private:
  union Storage {
    Storage() {}
    ~Storage() {}
    T value;
    Error error;
  } storage_;
  bool ok_;
};

}  // namespace pteron

// Assigns the value of a Result expression to `lhs`, or returns its error.
#define PTERON_ASSIGN_OR_RETURN(lhs, expr)               \
  auto PTERON_CONCAT(pteron_res_, __LINE__) = (expr);    \
  if (!PTERON_CONCAT(pteron_res_, __LINE__).ok())        \
    return PTERON_CONCAT(pteron_res_, __LINE__).error(); \
  lhs = std::move(PTERON_CONCAT(pteron_res_, __LINE__).get())

#define PTERON_CONCAT_(a, b) a##b
#define PTERON_CONCAT(a, b) PTERON_CONCAT_(a, b)
