// A node argument: one alternative per kind of argument an exported ATen call can carry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/ids.h"
#include "compiler/ir/sym_expr.h"

namespace pteron::compiler::ir {

struct None {
  bool operator==(const None&) const = default;
};

// A Scalar-typed argument keeps the Python type it was written with (alpha=1 is an int,
// alpha=1.0 a double): kernels and the .pte emitter care.
struct Scalar {
  std::variant<int64_t, double, bool> value;
  bool is_integral() const { return !std::holds_alternative<double>(value); }
  double to_double() const;
  bool operator==(const Scalar&) const = default;
};

// Ignored by pteron (everything runs on the device the program is built for); kept so that
// graphs print what was exported.
struct Device {
  std::string type;
  int64_t index = -1;
  bool operator==(const Device&) const = default;
};

struct TensorRef {
  ValueId id = kNoValue;
  bool operator==(const TensorRef&) const = default;
};

struct TensorList {
  std::vector<ValueId> ids;
  bool operator==(const TensorList&) const = default;
};

// Tensor?[] (e.g. index.Tensor's indices): kNoValue marks a None entry.
struct OptionalTensorList {
  std::vector<ValueId> ids;
  bool operator==(const OptionalTensorList&) const = default;
};

// A SymInt argument computed at run time from the graph's symbols (bounded dynamic shapes).
struct SymInt {
  SymExprPtr expr;
  bool operator==(const SymInt& o) const { return expr->str() == o.expr->str(); }
};

// A SymInt[] argument with at least one symbolic entry; literal entries have expr == nullptr.
struct SymIntItem {
  int64_t value = 0;
  SymExprPtr expr;
  bool operator==(const SymIntItem& o) const {
    return expr ? o.expr && expr->str() == o.expr->str() : !o.expr && value == o.value;
  }
};
struct SymIntList {
  std::vector<SymIntItem> items;
  bool operator==(const SymIntList&) const = default;
};

enum class ArgKind : uint8_t {
  None,
  Int,
  Float,
  Bool,
  String,
  ScalarType,
  MemoryFormat,
  Layout,
  Device,
  IntList,
  FloatList,
  BoolList,
  Tensor,
  TensorList,
  OptionalTensorList,
  Scalar,
  SymInt,
  SymIntList,
};

// Order matches ArgKind. SymInt/SymIntList appear only in graphs with dynamic shapes.
using ArgumentVariant =
    std::variant<None, int64_t, double, bool, std::string, ScalarType, MemoryFormat, Layout, Device,
                 std::vector<int64_t>, std::vector<double>, std::vector<bool>, TensorRef,
                 TensorList, OptionalTensorList, Scalar, SymInt, SymIntList>;

class Argument {
 public:
  Argument() = default;
  template <typename T>
    requires std::is_constructible_v<ArgumentVariant, T&&> &&
             (!std::is_same_v<std::decay_t<T>, int>)
  Argument(T&& value) : value_(std::forward<T>(value)) {}  // NOLINT: implicit by design
  // Plain int literals mean Int, not ambiguity between int64_t/double/bool.
  Argument(int value) : value_(int64_t{value}) {}  // NOLINT
  // A bare ValueId would silently become an Int: wrap it in TensorRef.
  Argument(ValueId) = delete;

  ArgKind kind() const { return static_cast<ArgKind>(value_.index()); }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(value_);
  }
  // Throws CompileError naming the expected and actual kind when the kind differs.
  template <typename T>
  const T& get() const {
    if (const T* v = std::get_if<T>(&value_)) return *v;
    throw_kind_mismatch(static_cast<ArgKind>(ArgumentVariant(T{}).index()));
  }
  template <typename T>
  T& get() {
    return const_cast<T&>(std::as_const(*this).get<T>());
  }
  const ArgumentVariant& variant() const { return value_; }

  bool is_none() const { return is<None>(); }
  bool is_tensor() const { return is<TensorRef>(); }
  ValueId tensor() const { return get<TensorRef>().id; }
  int64_t to_int() const { return get<int64_t>(); }
  double to_double() const;  // Float, Int or Scalar
  bool is_symbolic() const { return is<SymInt>() || is<SymIntList>(); }

  // Every value id this argument refers to (tensor, tensor list, optional tensor list).
  void for_each_value(const std::function<void(ValueId)>& fn) const;
  // Rewrites references to `from` into `to`; returns how many were rewritten.
  int replace_value(ValueId from, ValueId to);

  bool operator==(const Argument&) const = default;

 private:
  [[noreturn]] void throw_kind_mismatch(ArgKind expected) const;
  ArgumentVariant value_;
};

std::string_view arg_kind_name(ArgKind kind);

// Printable form; `value_name` turns value ids into names ("%x").
std::string to_string(const Argument& arg, const std::function<std::string(ValueId)>& value_name);

}  // namespace pteron::compiler::ir
