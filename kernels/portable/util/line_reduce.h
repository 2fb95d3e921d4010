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

// A (self, dim, keepdim, *, values, indices) call: its dim normalised (a 0-d self is one line
// of one element), its outs checked, `n` the length of a line.
struct LineReduceArgs {
  const Tensor* self = nullptr;
  bool keepdim = false;
  Tensor* values = nullptr;
  Tensor* indices = nullptr;
  int32_t dim = 0;
  int64_t n = 1;
};

inline Error read_line_reduce_args(const char* op, Span<EValue*> args, LineReduceArgs* a) {
  const Tensor& self = *args[0]->tensor;
  a->self = &self;
  a->keepdim = args[2]->b;
  a->values = args[3]->tensor;
  a->indices = args[4]->tensor;
  PTERON_TRY(normalize_dim(op, args[1]->i, self.dim() == 0 ? 1 : self.dim(), &a->dim));
  PTERON_TRY(expect_line_reduce_outs(op, self, a->dim, a->keepdim, *a->values, *a->indices));
  a->n = self.dim() == 0 ? 1 : self.size(a->dim);
  return Error::Ok;
}

template <typename Fn>
void for_each_line(const LineReduceArgs& a, Fn&& fn) {
  const Tensor& self = *a.self;
  const Tensor& values = *a.values;
  const Tensor& indices = *a.indices;
  const int32_t dim = a.dim;
  const bool keepdim = a.keepdim;
  if (values.numel() == 0) return;
  const int32_t rank = self.dim();
  const int64_t n = a.n;
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
