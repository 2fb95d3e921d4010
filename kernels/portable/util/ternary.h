// Broadcasting elementwise driver for three-input kernels (clamp with tensor bounds, ...).
#pragma once

#include "kernels/portable/util/elementwise.h"

namespace pteron {

// out = f(a, b, c) with a, b, c broadcast together, any dim order. Same dtypes take a typed
// path (f on compute-type values); mixed dtypes compute in double. Dtypes must be in kSet.
template <unsigned kSet, typename Fn>
Error ternary_elementwise(const char* op, const Tensor& a, const Tensor& b, const Tensor& c,
                          Tensor& out, Fn&& f) {
  if (!dtype_in(a.dtype(), kSet) || !dtype_in(b.dtype(), kSet) || !dtype_in(c.dtype(), kSet) ||
      !dtype_in(out.dtype(), kSet)) {
    return fail(Error::NotSupported, "%s: dtypes %s, %s, %s -> %s not supported", op,
                scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
                scalar_type_name(c.dtype()), scalar_type_name(out.dtype()));
  }
  RowPlan<4> plan;
  const Tensor* const inputs[3] = {&a, &b, &c};
  PTERON_TRY(plan_broadcast_rows<4>(op, inputs, out, &plan));

  if (a.dtype() == out.dtype() && b.dtype() == out.dtype() && c.dtype() == out.dtype()) {
    dispatch_dtype_in<kSet>(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* po = out.data<T>();
      const T* pa = a.data<const T>();
      const T* pb = b.data<const T>();
      const T* pc = c.data<const T>();
      for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
        T* o = po + off[0];
        const T* x = pa + off[1];
        const T* y = pb + off[2];
        const T* z = pc + off[3];
        if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) {
          for (int64_t k = 0; k < n; ++k)
            o[k] = store_value<T>(f(load_value(x[k]), load_value(y[k]), load_value(z[k])));
        } else {
          for (int64_t k = 0; k < n; ++k)
            o[k * st[0]] = store_value<T>(
                f(load_value(x[k * st[1]]), load_value(y[k * st[2]]), load_value(z[k * st[3]])));
        }
      });
    });
    return Error::Ok;
  }
  for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
    double x[kConvertChunk], y[kConvertChunk], z[kConvertChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kConvertChunk) {
      const int64_t m = n - k0 < kConvertChunk ? n - k0 : kConvertChunk;
      convert_elements(a.dtype(), element_ptr(a, off[1] + k0 * st[1]), st[1], ScalarType::Double, x,
                       1, m);
      convert_elements(b.dtype(), element_ptr(b, off[2] + k0 * st[2]), st[2], ScalarType::Double, y,
                       1, m);
      convert_elements(c.dtype(), element_ptr(c, off[3] + k0 * st[3]), st[3], ScalarType::Double, z,
                       1, m);
      for (int64_t k = 0; k < m; ++k) x[k] = static_cast<double>(f(x[k], y[k], z[k]));
      convert_elements(ScalarType::Double, x, 1, out.dtype(), element_ptr(out, off[0] + k0 * st[0]),
                       st[0], m);
    }
  });
  return Error::Ok;
}

}  // namespace pteron
