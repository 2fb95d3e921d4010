// Broadcasting elementwise driver shared by binary kernels (add, mul, comparisons, ...).
#pragma once

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"

namespace pteron {

// out = f(a, b) elementwise with broadcasting. `f` takes and returns values of compute type C.
// Same-dtype tensors take the typed fast path; mixed dtypes convert through double.
template <typename Fn>
Error binary_elementwise(const char* op, const Tensor& a, const Tensor& b, Tensor& out,
                         unsigned dtype_set, Fn&& f) {
  int32_t sizes[kMaxTensorDim];
  int32_t dim = 0;
  if (a.dim() > kMaxTensorDim || b.dim() > kMaxTensorDim) {
    return fail(Error::NotSupported, "%s: rank above %d", op, kMaxTensorDim);
  }
  PTERON_TRY(broadcast_shape(op, a, b, sizes, &dim));
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  int64_t so[kMaxTensorDim], sa[kMaxTensorDim], sb[kMaxTensorDim];
  broadcast_strides(out, sizes, dim, so);
  broadcast_strides(a, sizes, dim, sa);
  broadcast_strides(b, sizes, dim, sb);

  if (a.dtype() == out.dtype() && b.dtype() == out.dtype()) {
    const bool ok = dispatch_dtype(out.dtype(), dtype_set, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a.data<const T>();
      const T* pb = b.data<const T>();
      T* po = out.data<T>();
      for_each_row3(sizes, dim, so, sa, sb,
                    [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t os, int64_t as,
                        int64_t bs) {
                      if (os == 1 && as == 1 && bs == 1) {
                        for (int64_t k = 0; k < n; ++k)
                          po[o + k] = store_value<T>(f(load_value(pa[ia + k]), load_value(pb[ib + k])));
                      } else {
                        for (int64_t k = 0; k < n; ++k)
                          po[o + k * os] = store_value<T>(
                              f(load_value(pa[ia + k * as]), load_value(pb[ib + k * bs])));
                      }
                    });
    });
    if (!ok) return fail(Error::NotSupported, "%s: dtype %s not supported", op, scalar_type_name(out.dtype()));
    return Error::Ok;
  }
  if (!dispatch_dtype(out.dtype(), dtype_set, [](auto) {}) ||
      !is_supported(a.dtype()) || !is_supported(b.dtype())) {
    return fail(Error::NotSupported, "%s: dtypes %s, %s -> %s not supported", op,
                scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
                scalar_type_name(out.dtype()));
  }
  // Mixed dtypes: compute in double (exact for every type but int64 beyond 2^53).
  for_each_row3(sizes, dim, so, sa, sb,
                [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t os, int64_t as,
                    int64_t bs) {
                  for (int64_t k = 0; k < n; ++k) {
                    const double r = static_cast<double>(
                        f(load_as_double(a, ia + k * as), load_as_double(b, ib + k * bs)));
                    store_from_double(out, o + k * os, r);
                  }
                });
  return Error::Ok;
}

}  // namespace pteron
