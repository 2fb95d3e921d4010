// Walks the lines of `self` along `dim` for kernels that reduce each line to one value and its
// position (mode, nanmedian): `fn(x, step, n, value_offset, index_offset)` gets the line's first
// element, its stride and length, and where its results go in values / indices (same shape:
// self's without dim, or with dim kept as 1). For a 0-d self, one line of one element.
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// Checks values / indices (dtypes, shape, resized if dynamic) for a reduction of `self` along
// normalised `dim`.
inline Error expect_line_reduce_outs(const char* op, const Tensor& self, int32_t dim, bool keepdim,
                                     Tensor& values, Tensor& indices) {
  PTERON_CHECK(values.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: values out has dtype %s, expected %s", op, scalar_type_name(values.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices out must be int64", op);
  int32_t sizes[kMaxTensorDim];
  int32_t rank = 0;
  for (int32_t d = 0; d < self.dim(); ++d) {
    if (d != dim)
      sizes[rank++] = self.size(d);
    else if (keepdim)
      sizes[rank++] = 1;
  }
  PTERON_TRY(expect_out_shape(op, values, sizes, rank));
  PTERON_TRY(expect_out_shape(op, indices, sizes, rank));
  PTERON_CHECK(values.numel() == 0 || self.dim() == 0 || self.size(dim) > 0, Error::InvalidArgument,
               "%s: cannot reduce an empty dimension %d", op, static_cast<int>(dim));
  return Error::Ok;
}

template <typename Fn>
void for_each_line(const Tensor& self, int32_t dim, bool keepdim, const Tensor& values,
                   const Tensor& indices, Fn&& fn) {
  if (values.numel() == 0) return;
  const int32_t rank = self.dim();
  const int64_t n = rank == 0 ? 1 : self.size(dim);
  const int64_t step = rank == 0 ? 0 : self.stride(dim);
  int64_t idx[kMaxTensorDim] = {0};
  while (true) {
    int64_t in = 0, ov = 0, oi = 0;
    int32_t od = 0;
    for (int32_t d = 0; d < rank; ++d) {
      in += idx[d] * self.stride(d);
      if (d == dim && !keepdim) continue;
      if (d != dim) {
        ov += idx[d] * values.stride(od);
        oi += idx[d] * indices.stride(od);
      }
      ++od;
    }
    fn(in, step, n, ov, oi);
    int32_t d = rank - 1;
    for (; d >= 0; --d) {
      if (d == dim) continue;
      if (++idx[d] < self.size(d)) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace pteron
