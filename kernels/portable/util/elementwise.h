// Broadcasting elementwise driver shared by binary kernels (add, mul, maximum, ...).
#pragma once

#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/walk.h"

namespace pteron {

// Broadcasts `inputs` together into out (checking out's shape) and plans the walk over
// (out, inputs...): operand k + 1 of the plan is inputs[k].
template <int N>
Error plan_broadcast_rows(const char* op, const Tensor* const (&inputs)[N - 1], Tensor& out,
                          RowPlan<N>* plan) {
  int32_t sizes[kMaxTensorDim];
  int32_t dim = 0;
  PTERON_TRY(broadcast_shapes(op, Span<const Tensor* const>(inputs, N - 1), sizes, &dim));
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  int64_t s[N][kMaxTensorDim];
  const int64_t* strides[N];
  broadcast_strides(out, sizes, dim, s[0]);
  for (int k = 0; k < N; ++k) strides[k] = s[k];
  for (int k = 1; k < N; ++k) broadcast_strides(*inputs[k - 1], sizes, dim, s[k]);
  *plan = plan_rows<N>(sizes, dim, strides);
  return Error::Ok;
}

// Broadcasts a and b into out (checking out's shape) and plans the three-operand walk
// (out, a, b).
inline Error plan_binary_rows(const char* op, const Tensor& a, const Tensor& b, Tensor& out,
                              RowPlan<3>* plan) {
  const Tensor* const inputs[2] = {&a, &b};
  return plan_broadcast_rows<3>(op, inputs, out, plan);
}

// Mixed-dtype binary loop: converts chunks of a and b to double, computes f in double, converts
// the result to out's dtype. Exact for every dtype but int64 beyond 2^53.
template <typename Fn>
void binary_mixed_dtypes(const RowPlan<3>& plan, const Tensor& a, const Tensor& b, Tensor& out,
                         Fn&& f) {
  for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
    double x[kConvertChunk], y[kConvertChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kConvertChunk) {
      const int64_t m = n - k0 < kConvertChunk ? n - k0 : kConvertChunk;
      convert_elements(a.dtype(), element_ptr(a, off[1] + k0 * st[1]), st[1], ScalarType::Double, x,
                       1, m);
      convert_elements(b.dtype(), element_ptr(b, off[2] + k0 * st[2]), st[2], ScalarType::Double, y,
                       1, m);
      for (int64_t k = 0; k < m; ++k) x[k] = static_cast<double>(f(x[k], y[k]));
      convert_elements(ScalarType::Double, x, 1, out.dtype(), element_ptr(out, off[0] + k0 * st[0]),
                       st[0], m);
    }
  });
}

// out = f(a, b) elementwise with broadcasting, any dim order. `f` takes and returns values of
// compute type C (float for Half/BFloat16). Same-dtype tensors take the typed fast path; mixed
// dtypes compute in double (C = double). out's dtype must be in `dtype_set`.
template <typename Fn>
Error binary_elementwise(const char* op, const Tensor& a, const Tensor& b, Tensor& out,
                         unsigned dtype_set, Fn&& f) {
  RowPlan<3> plan;
  PTERON_TRY(plan_binary_rows(op, a, b, out, &plan));
  if (!dtype_in(out.dtype(), dtype_set) || !is_supported(a.dtype()) || !is_supported(b.dtype())) {
    return fail(Error::NotSupported, "%s: dtypes %s, %s -> %s not supported", op,
                scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
                scalar_type_name(out.dtype()));
  }
  if (a.dtype() != out.dtype() || b.dtype() != out.dtype()) {
    binary_mixed_dtypes(plan, a, b, out, f);
    return Error::Ok;
  }
  dispatch_dtype(out.dtype(), dtype_set, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<const T>();
    const T* pb = b.data<const T>();
    T* po = out.data<T>();
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      T* o = po + off[0];
      const T* x = pa + off[1];
      const T* y = pb + off[2];
      if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
        for (int64_t k = 0; k < n; ++k)
          o[k] = store_value<T>(f(load_value(x[k]), load_value(y[k])));
      } else if (st[0] == 1 && st[1] == 1 && st[2] == 0) {  // tensor op broadcast value
        const auto yv = load_value(y[0]);
        for (int64_t k = 0; k < n; ++k) o[k] = store_value<T>(f(load_value(x[k]), yv));
      } else if (st[0] == 1 && st[1] == 0 && st[2] == 1) {
        const auto xv = load_value(x[0]);
        for (int64_t k = 0; k < n; ++k) o[k] = store_value<T>(f(xv, load_value(y[k])));
      } else {
        for (int64_t k = 0; k < n; ++k)
          o[k * st[0]] = store_value<T>(f(load_value(x[k * st[1]]), load_value(y[k * st[2]])));
      }
    });
  });
  return Error::Ok;
}

// binary_elementwise for ops defined on floating values only (atan2, copysign, hypot): out's
// dtype must be floating and f(x, y) sees floating C only. The dispatch still instantiates the
// other types; they return 0 and are never called.
template <typename Fn>
Error binary_float_elementwise(const char* op, const Tensor& a, const Tensor& b, Tensor& out,
                               Fn&& f) {
  return binary_elementwise(op, a, b, out, kFloatTypes, [&f](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(f(x, y));
    else
      return C(0);
  });
}

}  // namespace pteron
