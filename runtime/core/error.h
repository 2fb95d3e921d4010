// Errors are values: every fallible runtime call returns Error or Result<T>.
// The failing site also records a one-line message (fail()), which hosts print and
// bare-metal builds may ignore; no heap, no exceptions.
#pragma once

#include <cstdint>

namespace pteron {

enum class Error : uint8_t {
  Ok = 0,
  Internal,
  InvalidArgument,  // caller passed something wrong (shape, dtype, index)
  InvalidProgram,   // the program file is malformed or inconsistent
  NotFound,         // a method, kernel or backend is not there
  NotSupported,     // valid, but this build cannot do it
  OutOfMemory,      // an allocator ran out
  OutOfRange,       // an index or offset is past its bound
  AccessFailed,     // a data loader could not read
  DelegateFailed,   // a backend reported failure
};

const char* error_name(Error e);

// Records a formatted one-line message for the current thread and returns `e`, so call sites
// read `return fail(Error::InvalidProgram, "value %d out of range", i);`.
Error fail(Error e, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The message recorded by the most recent fail() on this thread ("" if none).
const char* last_error_message();
void clear_error_message();

}  // namespace pteron

#define PTERON_TRY(expr)                                                \
  do {                                                                  \
    ::pteron::Error pteron_try_err_ = (expr);                           \
    if (pteron_try_err_ != ::pteron::Error::Ok) return pteron_try_err_; \
  } while (0)

#define PTERON_CHECK(cond, err, ...)                        \
  do {                                                      \
    if (!(cond)) return ::pteron::fail((err), __VA_ARGS__); \
  } while (0)
