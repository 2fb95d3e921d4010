// cummax / cummin: the running extreme along dim and the index where it was last reached (ties
// move the index forward, and a NaN, once seen, stays, as in torch).
#pragma once

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/line_scan.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

template <bool kMax>
Error cum_extreme_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& values = *args[2]->tensor;
  Tensor& indices = *args[3]->tensor;
  PTERON_CHECK(values.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: values out has dtype %s, expected %s", op, scalar_type_name(values.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices out must be int64, got %s", op, scalar_type_name(indices.dtype()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(op, args[1]->i, self.dim() == 0 ? 1 : self.dim(), &dim));
  PTERON_TRY(expect_out_shape(op, values, self.sizes().data(), self.dim()));
  PTERON_TRY(expect_out_shape(op, indices, self.sizes().data(), self.dim()));
  if (self.numel() == 0) return Error::Ok;
  const int64_t len = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t s0 = self.dim() == 0 ? 0 : self.stride(dim);
  const int64_t s1 = self.dim() == 0 ? 0 : values.stride(dim);
  const int64_t s2 = self.dim() == 0 ? 0 : indices.stride(dim);
  const bool ok = dispatch_dtype(self.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    T* v = values.data<T>();
    int64_t* ix = indices.data<int64_t>();
    const Tensor* ts[3] = {&self, &values, &indices};
    for_each_line<3>(ts, self.dim() == 0 ? -1 : dim, [&](const int64_t* off) {
      auto best = load_value(x[off[0]]);
      int64_t at = 0;
      for (int64_t k = 0; k < len; ++k) {
        const auto c = load_value(x[off[0] + k * s0]);
        const bool nan_best = best != best;
        const bool take =
            kMax ? (c != c || (!nan_best && c >= best)) : (c != c || (!nan_best && c <= best));
        if (take) {
          best = c;
          at = k;
        }
        v[off[1] + k * s1] = store_value<T>(best);
        ix[off[2] + k * s2] = at;
      }
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", op,
               scalar_type_name(self.dtype()));
  return Error::Ok;
}

}  // namespace pteron
