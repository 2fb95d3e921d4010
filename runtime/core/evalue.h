// EValue: one slot of a method's value table (tensor, scalar, list or none).
#pragma once

#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace pteron {

enum class Tag : uint8_t {
  None,
  Int,
  Double,
  Bool,
  Tensor,
  String,
  IntList,
  DoubleList,
  BoolList,
  TensorList,
  OptionalTensorList,  // entries may be nullptr (None)
};

const char* tag_name(Tag tag);

struct EValue {
  Tag tag = Tag::None;
  union {
    int64_t i;
    double d;
    bool b;
    Tensor* tensor;
    Span<const char> string;
    Span<const int64_t> int_list;
    Span<const double> double_list;
    Span<const bool> bool_list;
    Span<Tensor* const> tensor_list;
  };

  EValue() : i(0) {}
  static EValue from_int(int64_t v) {
    EValue e;
    e.tag = Tag::Int;
    e.i = v;
    return e;
  }
  static EValue from_double(double v) {
    EValue e;
    e.tag = Tag::Double;
    e.d = v;
    return e;
  }
  static EValue from_bool(bool v) {
    EValue e;
    e.tag = Tag::Bool;
    e.b = v;
    return e;
  }
  static EValue from_tensor(Tensor* t) {
    EValue e;
    e.tag = Tag::Tensor;
    e.tensor = t;
    return e;
  }

  bool is_none() const { return tag == Tag::None; }
  bool is_tensor() const { return tag == Tag::Tensor; }
  bool is_int() const { return tag == Tag::Int; }
  bool is_scalar() const { return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool; }
  // A Scalar argument as double (Int, Double or Bool).
  double scalar_as_double() const {
    return tag == Tag::Double ? d : tag == Tag::Int ? static_cast<double>(i) : (b ? 1.0 : 0.0);
  }
  // A Scalar argument as int64. A double truncates toward zero; NaN and values beyond int64
  // (undefined behaviour for a plain cast, and a file may hold any double) become 0, as
  // store_value does for tensors.
  int64_t scalar_as_int() const {
    if (tag == Tag::Double) return d > -9.2e18 && d < 9.2e18 ? static_cast<int64_t>(d) : 0;
    return tag == Tag::Int ? i : (b ? 1 : 0);
  }
};

}  // namespace pteron
