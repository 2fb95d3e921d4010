// Argument checks shared by the Cortex-M int8 kernels: every failure names the op.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/requantize.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron::cortex_m {

// `t` must be an int8 tensor in the default (contiguous) dim order.
inline Error check_int8(const char* op, const Tensor& t, const char* what) {
  if (t.dtype() != ScalarType::Char) {
    return fail(Error::InvalidArgument, "%s: %s must be int8, got %s", op, what,
                scalar_type_name(t.dtype()));
  }
  if (!t.is_contiguous()) {
    return fail(Error::NotSupported, "%s: %s must be contiguous (dim order 0..n-1)", op, what);
  }
  return Error::Ok;
}

inline Error check_dtype(const char* op, const Tensor& t, ScalarType dtype, const char* what) {
  if (t.dtype() != dtype) {
    return fail(Error::InvalidArgument, "%s: %s must be %s, got %s", op, what,
                scalar_type_name(dtype), scalar_type_name(t.dtype()));
  }
  if (!t.is_contiguous()) {
    return fail(Error::NotSupported, "%s: %s must be contiguous (dim order 0..n-1)", op, what);
  }
  return Error::Ok;
}

inline Error check_rank(const char* op, const Tensor& t, int32_t rank, const char* what) {
  if (t.dim() != rank) {
    return fail(Error::InvalidArgument, "%s: %s must have %d dims, got %d", op, what,
                static_cast<int>(rank), static_cast<int>(t.dim()));
  }
  return Error::Ok;
}

inline Error check_same_shape(const char* op, const Tensor& a, const Tensor& b, const char* what) {
  bool same = a.dim() == b.dim();
  for (int32_t d = 0; same && d < a.dim(); ++d) same = a.size(d) == b.size(d);
  if (!same) return fail(Error::InvalidArgument, "%s: %s shapes differ", op, what);
  return Error::Ok;
}

// A Q31 multiplier and shift as the compiler computes them (quantize_multiplier).
inline Error check_requant(const char* op, int64_t multiplier, int64_t shift, const char* what) {
  if (multiplier < 0 || multiplier > INT32_MAX || shift < kMinShift || shift > kMaxShift) {
    return fail(Error::InvalidArgument,
                "%s: %s multiplier %lld / shift %lld out of range ([0, 2^31), [%d, %d])", op, what,
                static_cast<long long>(multiplier), static_cast<long long>(shift),
                static_cast<int>(kMinShift), static_cast<int>(kMaxShift));
  }
  return Error::Ok;
}

inline Error check_activation(const char* op, int64_t lo, int64_t hi) {
  if (lo < kInt8Min || hi > kInt8Max || lo > hi) {
    return fail(Error::InvalidArgument, "%s: activation range [%lld, %lld] is not within int8", op,
                static_cast<long long>(lo), static_cast<long long>(hi));
  }
  return Error::Ok;
}

inline Error check_zero_point(const char* op, int64_t zp, const char* what) {
  if (zp < kInt8Min || zp > kInt8Max) {
    return fail(Error::InvalidArgument, "%s: %s %lld is not an int8 value", op, what,
                static_cast<long long>(zp));
  }
  return Error::Ok;
}

// An int[] argument of one or two positive/non-negative values as (h, w).
inline Error int_pair(const char* op, const EValue& v, const char* what, int64_t min_value,
                      int32_t pair[2]) {
  const Span<const int64_t> list = v.int_list;
  if (list.size() != 1 && list.size() != 2) {
    return fail(Error::InvalidArgument, "%s: %s needs 1 or 2 values, got %d", op, what,
                static_cast<int>(list.size()));
  }
  for (size_t i = 0; i < 2; ++i) {
    const int64_t x = list[list.size() == 1 ? 0 : i];
    if (x < min_value || x > (1 << 20)) {
      return fail(Error::InvalidArgument, "%s: %s value %lld out of range", op, what,
                  static_cast<long long>(x));
    }
    pair[i] = static_cast<int32_t>(x);
  }
  return Error::Ok;
}

// Elementwise binary ops (add, mul): self, other and out int8 of one shape, and their zero
// points in int8 range.
inline Error check_binary_int8(const char* op, const Tensor& self, const Tensor& other,
                               const Tensor& out, int64_t self_zp, int64_t other_zp,
                               int64_t out_zp) {
  PTERON_TRY(check_int8(op, self, "self"));
  PTERON_TRY(check_int8(op, other, "other"));
  PTERON_TRY(check_int8(op, out, "out"));
  PTERON_TRY(check_same_shape(op, self, out, "self and out"));
  PTERON_TRY(check_same_shape(op, other, out, "other and out"));
  PTERON_TRY(check_zero_point(op, self_zp, "self_zero_point"));
  PTERON_TRY(check_zero_point(op, other_zp, "other_zero_point"));
  return check_zero_point(op, out_zp, "output_zero_point");
}

}  // namespace pteron::cortex_m
