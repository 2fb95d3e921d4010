// Reading non-tensor kernel arguments: Scalars typed for a compute type, strings.
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

// A Scalar argument, kept both ways so integer math stays exact beyond 2^53.
struct ScalarArg {
  double d = 0;
  int64_t i = 0;
  bool floating = false;  // the program passed a Double (torch promotes int tensors to float)

  explicit ScalarArg(const EValue& v)
      : d(v.scalar_as_double()), i(v.scalar_as_int()), floating(v.tag == Tag::Double) {}

  // The value in compute type C: the double for floating C, the integer otherwise.
  template <typename C>
  C as() const {
    if constexpr (std::is_same_v<C, bool>)
      return floating ? d != 0 : i != 0;
    else if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(d);
    else
      return static_cast<C>(i);
  }
};

// Fails when a floating Scalar would be written to an integer or bool output: torch's result
// type would be floating there, which cannot be cast to the out dtype.
inline Error check_scalar_fits_out(const char* op, const ScalarArg& s, const Tensor& out) {
  if (s.floating && !is_floating(out.dtype())) {
    return fail(Error::InvalidArgument, "%s: a floating scalar needs a floating out, got %s", op,
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

// Fails when storing Scalar `s` in dtype `t` would overflow, as torch refuses for fill values
// ("value cannot be converted without overflow"): integers out of range (unsigned types also
// take negatives down to -max, which wrap, as in torch) and finite values beyond float32
// (infinities are fine).
inline Error check_scalar_fits_dtype(const char* op, const ScalarArg& s, ScalarType t) {
  double lo = 0, end = 0;  // integers must lie in [lo, end): end is one past the maximum
  switch (t) {
    case ScalarType::Byte:
      lo = -255.0, end = 256.0;
      break;
    case ScalarType::Char:
      lo = -128.0, end = 128.0;
      break;
    case ScalarType::Short:
      lo = -32768.0, end = 32768.0;
      break;
    case ScalarType::UInt16:
      lo = -65535.0, end = 65536.0;
      break;
    case ScalarType::Int:
      lo = -2147483648.0, end = 2147483648.0;
      break;
    case ScalarType::Long:
      if (!s.floating) return Error::Ok;
      lo = -9223372036854775808.0, end = 9223372036854775808.0;
      break;
    case ScalarType::Float:
      if (!std::isfinite(s.d) || std::fabs(s.d) <= 3.4028234663852886e38) return Error::Ok;
      lo = end = 0;  // a finite value beyond float32's range
      break;
    default:
      return Error::Ok;  // double, float16, bfloat16, bool take any value
  }
  const double v = s.floating ? s.d : static_cast<double>(s.i);
  if (!(v >= lo && v < end)) {  // NaN fails too
    return fail(Error::InvalidArgument, "%s: value %g cannot be converted to %s without overflow",
                op, v, scalar_type_name(t));
  }
  return Error::Ok;
}

// True if a String argument equals `s`.
inline bool string_equals(const EValue& v, const char* s) {
  return v.tag == Tag::String && v.string.size() == std::strlen(s) &&
         std::memcmp(v.string.data(), s, v.string.size()) == 0;
}

// Fails unless argument `index` is a String (or None when `optional`).
inline Error check_string_arg(const char* op, const EValue& v, size_t index, bool optional) {
  if (v.tag == Tag::String || (optional && v.tag == Tag::None)) return Error::Ok;
  return fail(Error::InvalidProgram, "%s argument %zu: expected a string%s, got %s", op, index,
              optional ? " or None" : "", tag_name(v.tag));
}

}  // namespace pteron
