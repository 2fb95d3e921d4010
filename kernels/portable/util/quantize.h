// Shared pieces of the quantized_decomposed kernels (quantize / dequantize, per tensor and per
// channel), which follow torch.ao.quantization.fx._decomposed exactly:
//   quantize   q = clamp(round_half_even(x * (1 / scale)) + zero_point, qmin, qmax)
//   dequantize x = (q - zero_point) * scale
// Input and out are dense tensors of the same shape and dim order, so elements pair up by
// memory offset and any layout works.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// The integer types a quantized tensor may have (torch's _DTYPE_TO_QVALUE_BOUNDS minus the
// sub-byte ones): calls fn(T{}) for `t`, or fails naming `op`.
template <typename Fn>
Error dispatch_quantized_dtype(const char* op, ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Byte:
      return fn(uint8_t{});
    case ScalarType::Char:
      return fn(int8_t{});
    case ScalarType::Short:
      return fn(int16_t{});
    case ScalarType::UInt16:
      return fn(uint16_t{});
    case ScalarType::Int:
      return fn(int32_t{});
    default:
      return fail(Error::InvalidArgument,
                  "%s: %s is not a quantized dtype (uint8, int8, int16, uint16, int32)", op,
                  scalar_type_name(t));
  }
}

// out must have in's shape and dim order (the kernels pair elements by memory offset).
inline Error check_same_layout(const char* op, const Tensor& in, Tensor& out) {
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  if (in.numel() == 0) return Error::Ok;  // nothing to pair up
  for (int32_t d = 0; d < in.dim(); ++d) {
    if (in.dim_order()[d] != out.dim_order()[d]) {
      return fail(Error::NotSupported, "%s: input and out must have the same dim order", op);
    }
  }
  return Error::Ok;
}

// [qmin, qmax] must lie within the quantized dtype's range, qmin <= qmax.
inline Error check_quant_range(const char* op, int64_t qmin, int64_t qmax, ScalarType t) {
  int64_t lo = 0, hi = 0;
  switch (t) {
    case ScalarType::Byte:
      lo = 0, hi = 255;
      break;
    case ScalarType::Char:
      lo = -128, hi = 127;
      break;
    case ScalarType::Short:
      lo = -32768, hi = 32767;
      break;
    case ScalarType::UInt16:
      lo = 0, hi = 65535;
      break;
    case ScalarType::Int:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    default:
      return Error::Ok;  // dispatch_quantized_dtype reports it
  }
  if (qmin > qmax || qmin < lo || qmax > hi) {
    return fail(Error::InvalidArgument, "%s: quant range [%lld, %lld] does not fit %s", op,
                static_cast<long long>(qmin), static_cast<long long>(qmax), scalar_type_name(t));
  }
  return Error::Ok;
}

// The only element of a one-element tensor (a .tensor overload's scale or zero point).
inline Error read_single(const char* op, const char* what, const Tensor& t, double* value) {
  if (t.numel() != 1) {
    return fail(Error::InvalidArgument, "%s: %s must have one element, got %lld", op, what,
                static_cast<long long>(t.numel()));
  }
  switch (t.dtype()) {
    case ScalarType::Float:
      *value = *t.data<float>();
      return Error::Ok;
    case ScalarType::Double:
      *value = *t.data<double>();
      return Error::Ok;
    case ScalarType::Int:
      *value = *t.data<int32_t>();
      return Error::Ok;
    case ScalarType::Long:
      *value = static_cast<double>(*t.data<int64_t>());
      return Error::Ok;
    default:
      return fail(Error::InvalidArgument, "%s: %s has unsupported dtype %s", op, what,
                  scalar_type_name(t.dtype()));
  }
}

// Element i of a 1-D tensor of channel parameters, read as C.
template <typename C>
C channel_param(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case ScalarType::Float:
      return static_cast<C>(t.data<float>()[i]);
    case ScalarType::Double:
      return static_cast<C>(t.data<double>()[i]);
    case ScalarType::Int:
      return static_cast<C>(t.data<int32_t>()[i]);
    default:
      return static_cast<C>(t.data<int64_t>()[i]);
  }
}

// scales (float32/float64) and zero points (int32/int64/float; optional) are 1-D with one entry
// per channel of `in` along `axis`.
inline Error check_channel_params(const char* op, const Tensor& in, int32_t axis,
                                  const Tensor& scales, const Tensor* zero_points) {
  const int64_t channels = in.size(axis);
  if (scales.dim() != 1 || scales.size(0) != channels ||
      (scales.dtype() != ScalarType::Float && scales.dtype() != ScalarType::Double)) {
    return fail(Error::InvalidArgument, "%s: scales must be float32/float64 of shape [%lld]", op,
                static_cast<long long>(channels));
  }
  if (zero_points == nullptr) return Error::Ok;
  const ScalarType z = zero_points->dtype();
  if (zero_points->dim() != 1 || zero_points->size(0) != channels ||
      (z != ScalarType::Long && z != ScalarType::Int && z != ScalarType::Float &&
       z != ScalarType::Double)) {
    return fail(Error::InvalidArgument, "%s: zero_points must be int32/int64/float of shape [%lld]",
                op, static_cast<long long>(channels));
  }
  return Error::Ok;
}

// Per-tensor quantize of n floats (torch multiplies by the float32 reciprocal; round half to
// even, the default rounding mode, as torch.round).
template <typename Q>
void quantize_row(const float* x, Q* q, int64_t n, float inv_scale, float zero_point, float qmin,
                  float qmax) {
  for (int64_t i = 0; i < n; ++i) {
    float v = std::nearbyint(x[i] * inv_scale) + zero_point;
    v = v > qmin ? v : qmin;  // NaN becomes qmin (torch's cast of NaN is undefined)
    v = v < qmax ? v : qmax;
    if constexpr (sizeof(Q) >= 4) {
      // float(INT32_MAX) is 2^31, which does not fit: saturate after widening.
      const double d = v;
      q[i] = d >= 2147483647.0 ? INT32_MAX : static_cast<Q>(d);
    } else {
      q[i] = static_cast<Q>(v);
    }
  }
}

template <typename Q>
void dequantize_row(const Q* q, float* x, int64_t n, float scale, float zero_point) {
  for (int64_t i = 0; i < n; ++i) x[i] = (static_cast<float>(q[i]) - zero_point) * scale;
}

}  // namespace pteron
