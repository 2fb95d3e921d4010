// Elementwise driver for unary kernels (neg, exp, relu, clamp, casts with a function, ...).
//
// out = f(in) over any dim order. Same-dtype tensors take a typed path (one flat loop when in
// and out share a layout); mixed dtypes (int -> float for exp, float -> bool for isnan, ...)
// convert chunks through double so no per-element dispatch is left in the loop.
#pragma once

#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/walk.h"

namespace pteron {

// True when `a` and `b` have the same sizes and put every element at the same offset.
inline bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int32_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != b.size(d)) return false;
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

// Plans a two-operand walk (out, in) over `out`'s shape; `in` must have the same shape.
inline RowPlan<2> plan_unary_rows(const Tensor& in, const Tensor& out) {
  int64_t so[kMaxTensorDim], si[kMaxTensorDim];
  broadcast_strides(out, out.sizes().data(), out.dim(), so);
  broadcast_strides(in, out.sizes().data(), out.dim(), si);
  const int64_t* strides[2] = {so, si};
  return plan_rows<2>(out.sizes().data(), out.dim(), strides);
}

// The mixed-dtype path: chunks of `in` converted to C (`c_type`), f applied, converted to out.
template <typename C, typename Fn>
void convert_apply(const Tensor& in, Tensor& out, ScalarType c_type, Fn& f) {
  for_each_row(plan_unary_rows(in, out), [&](const int64_t* off, int64_t n, const int64_t* st) {
    C buf[kConvertChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kConvertChunk) {
      const int64_t m = n - k0 < kConvertChunk ? n - k0 : kConvertChunk;
      convert_elements(in.dtype(), element_ptr(in, off[1] + k0 * st[1]), st[1], c_type, buf, 1, m);
      for (int64_t k = 0; k < m; ++k) buf[k] = static_cast<C>(f(buf[k]));
      convert_elements(c_type, buf, 1, out.dtype(), element_ptr(out, off[0] + k0 * st[0]), st[0],
                       m);
    }
  });
}

// Applies f to every element. `f` takes a compute-type value (float for Half/BFloat16, the
// type itself otherwise; on the mixed-dtype path float for an integer input to a float32 /
// float16 / bfloat16 out, double otherwise) and returns a value convertible to it.
// The input dtype must be in `kInSet`, the output dtype in `kOutSet`; `out` must have in's shape.
template <unsigned kInSet, unsigned kOutSet, typename Fn>
Error unary_elementwise(const char* op, const Tensor& in, Tensor& out, Fn&& f) {
  if (in.dim() > kMaxTensorDim) {
    return fail(Error::NotSupported, "%s: rank %d above %d", op, in.dim(), kMaxTensorDim);
  }
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  if (!dtype_in(in.dtype(), kInSet) || !dtype_in(out.dtype(), kOutSet)) {
    return fail(Error::NotSupported, "%s: dtype %s -> %s not supported", op,
                scalar_type_name(in.dtype()), scalar_type_name(out.dtype()));
  }
  if (in.dtype() == out.dtype()) {
    dispatch_dtype_in<kInSet & kOutSet>(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pi = in.data<const T>();
      T* po = out.data<T>();
      if (same_layout(in, out)) {
        const int64_t n = out.numel();
        for (int64_t k = 0; k < n; ++k) po[k] = store_value<T>(f(load_value(pi[k])));
        return;
      }
      for_each_row(plan_unary_rows(in, out), [&](const int64_t* off, int64_t n, const int64_t* st) {
        T* o = po + off[0];
        const T* x = pi + off[1];
        for (int64_t k = 0; k < n; ++k) o[k * st[0]] = store_value<T>(f(load_value(x[k * st[1]])));
      });
    });
    return Error::Ok;
  }
  // An integer or bool input to a float32 / float16 / bfloat16 out is computed in float, as torch
  // computes it (promoted to the out dtype): in double, results at poles and roundings differ.
  if constexpr (std::is_invocable_v<Fn&, float>) {
    const ScalarType o = out.dtype();
    if (!is_floating(in.dtype()) &&
        (o == ScalarType::Float || o == ScalarType::Half || o == ScalarType::BFloat16)) {
      convert_apply<float>(in, out, ScalarType::Float, f);
      return Error::Ok;
    }
  }
  convert_apply<double>(in, out, ScalarType::Double, f);
  return Error::Ok;
}

// A float-valued math function (exp, sigmoid, ...): any real or bool input, float output
// (torch promotes integer inputs to the float output dtype).
template <typename Fn>
Error unary_float_op(const char* op, const Tensor& in, Tensor& out, Fn&& f) {
  return unary_elementwise<kAllTypes, kFloatTypes>(op, in, out, f);
}

// unary_float_op for a function of a double (the special functions): each value widened to
// double, f applied, the result rounded once to the compute type.
template <typename Fn>
Error unary_float_op_in_double(const char* op, const Tensor& in, Tensor& out, Fn&& f) {
  return unary_float_op(
      op, in, out, [&f](auto x) { return static_cast<decltype(x)>(f(static_cast<double>(x))); });
}

}  // namespace pteron
