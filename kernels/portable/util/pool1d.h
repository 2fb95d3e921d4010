// 1-D pooling over (N, C, L) or (C, L): every row of L elements, walked with each tensor's own
// strides (any dim order).
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

inline Error check_pool1d(const char* op, const Tensor& self, const Tensor& out) {
  PTERON_CHECK(self.dim() == 2 || self.dim() == 3, Error::InvalidArgument,
               "%s: expected a 2-D or 3-D input, got %d-D", op, static_cast<int>(self.dim()));
  PTERON_CHECK(self.size(self.dim() - 1) > 0, Error::InvalidArgument, "%s: the input is empty", op);
  PTERON_CHECK(is_floating(self.dtype()) && out.dtype() == self.dtype(), Error::NotSupported,
               "%s: needs a floating self and an out of its dtype, got %s -> %s", op,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  return Error::Ok;
}

// Checks out's shape (self's with the last dim `out_len`), then calls
// fn(const T* row, int64_t in_step, T* out_row, int64_t out_step) for every row.
template <typename Fn>
Error for_each_pool1d_row(const char* op, const Tensor& self, Tensor& out, int64_t out_len,
                          Fn&& fn) {
  PTERON_CHECK(out_len >= 1 && out_len <= INT32_MAX, Error::InvalidArgument,
               "%s: output length %lld is invalid", op, static_cast<long long>(out_len));
  int32_t sizes[3];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  sizes[self.dim() - 1] = static_cast<int32_t>(out_len);
  PTERON_TRY(expect_out_shape(op, out, sizes, self.dim()));
  const bool batched = self.dim() == 3;
  const int64_t N = batched ? self.size(0) : 1, C = self.size(batched ? 1 : 0);
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    T* y = out.data<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t xi = (batched ? n * self.stride(0) : 0) + c * self.stride(batched ? 1 : 0);
        const int64_t yi = (batched ? n * out.stride(0) : 0) + c * out.stride(batched ? 1 : 0);
        fn(x + xi, static_cast<int64_t>(self.stride(self.dim() - 1)), y + yi,
           static_cast<int64_t>(out.stride(out.dim() - 1)));
      }
  });
  return Error::Ok;
}

}  // namespace pteron
