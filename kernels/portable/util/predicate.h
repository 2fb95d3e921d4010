// Drivers for kernels whose result is a truth value (comparisons, logical ops, isnan):
// inputs of one dtype and a Bool output take a typed loop; anything else (mixed input dtypes,
// a non-Bool output) computes in double, chunk by chunk.
#pragma once

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"

namespace pteron {

// out = f(a, b) with broadcasting; f takes two compute-type values and returns bool.
// Input dtypes must be in `kInSet`; out may be any supported dtype (torch writes 0/1).
template <unsigned kInSet, typename Fn>
Error binary_predicate(const char* op, const Tensor& a, const Tensor& b, Tensor& out, Fn&& f) {
  RowPlan<3> plan;
  PTERON_TRY(plan_binary_rows(op, a, b, out, &plan));
  if (!dtype_in(a.dtype(), kInSet) || !dtype_in(b.dtype(), kInSet) || !is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtypes %s, %s -> %s not supported", op,
                scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
                scalar_type_name(out.dtype()));
  }
  if (a.dtype() != b.dtype() || out.dtype() != ScalarType::Bool) {
    binary_mixed_dtypes(plan, a, b, out, f);
    return Error::Ok;
  }
  dispatch_dtype_in<kInSet>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<const T>();
    const T* pb = b.data<const T>();
    bool* po = out.data<bool>();
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      bool* o = po + off[0];
      const T* x = pa + off[1];
      const T* y = pb + off[2];
      if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
        for (int64_t k = 0; k < n; ++k) o[k] = f(load_value(x[k]), load_value(y[k]));
      } else if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
        const auto yv = load_value(y[0]);
        for (int64_t k = 0; k < n; ++k) o[k] = f(load_value(x[k]), yv);
      } else {
        for (int64_t k = 0; k < n; ++k)
          o[k * st[0]] = f(load_value(x[k * st[1]]), load_value(y[k * st[2]]));
      }
    });
  });
  return Error::Ok;
}

// out = f(in); f takes a compute-type value and returns bool. The input dtype must be in
// `kInSet`; out may be any supported dtype.
template <unsigned kInSet, typename Fn>
Error unary_predicate(const char* op, const Tensor& in, Tensor& out, Fn&& f) {
  if (out.dtype() != ScalarType::Bool || in.dtype() == ScalarType::Bool) {
    return unary_elementwise<kInSet, kAllTypes>(op, in, out, f);
  }
  if (in.dim() > kMaxTensorDim) {
    return fail(Error::NotSupported, "%s: rank %d above %d", op, in.dim(), kMaxTensorDim);
  }
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  const bool ok = dispatch_dtype_in<kInSet>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pi = in.data<const T>();
    bool* po = out.data<bool>();
    for_each_row(plan_unary_rows(in, out), [&](const int64_t* off, int64_t n, const int64_t* st) {
      bool* o = po + off[0];
      const T* x = pi + off[1];
      if (st[0] == 1 && st[1] == 1) {
        for (int64_t k = 0; k < n; ++k) o[k] = f(load_value(x[k]));
      } else {
        for (int64_t k = 0; k < n; ++k) o[k * st[0]] = f(load_value(x[k * st[1]]));
      }
    });
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(in.dtype()));
  }
  return Error::Ok;
}

}  // namespace pteron
