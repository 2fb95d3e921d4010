// The first step every scatter-style op shares (index_put, index_copy, slice_scatter,
// select_scatter, scatter, scatter_add, scatter_reduce): out starts as a copy of self, then the
// op writes into it. A cache update the compiler plans in place hands out the memory of self
// (the old value has no later reader), and then nothing moves.
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Checks that out has self's dtype and shape, then copies self into out unless they are the
// same memory (which then must also have the same layout).
Error start_from_self(const char* op, const Tensor& self, Tensor& out);

// Checks the arguments of index_copy / index_reduce (self, dim, index, source): index is a 0-d or
// 1-D integer tensor (int32 only when `allow_int32`) of indices into self.size(dim), and source
// is self with index.numel() rows along dim. `dim` receives the normalised dim.
Error check_index_rows(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                       const Tensor& source, bool allow_int32, int32_t* dim);

}  // namespace pteron

#include "kernels/portable/util/index_util.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// Checks scatter(self, dim, index, src): index is int64 with self's rank (0-d tensors count
// as one element), no larger than src in any dim (when `src` is given) nor than self outside
// `dim`, and every index lies in [0, self.size(dim)). `dim` receives the normalised dim.
Error check_scatter_args(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                         const Tensor* src, int32_t* dim);

// src_strides[d] = src's stride d for each dim index and src share, 0 beyond: the
// `src_strides` for_each_scatter takes for a tensor src.
inline void scatter_src_strides(const Tensor& index, const Tensor& src, int64_t* src_strides) {
  for (int32_t d = 0; d < kMaxTensorDim; ++d) src_strides[d] = 0;
  for (int32_t d = 0; d < index.dim() && d < src.dim(); ++d) src_strides[d] = src.stride(d);
}

// The common start of scatter.src_out and scatter_add.out, args (self, dim, index, src, out):
// checks them (check_scatter_args), copies self into out (start_from_self), and gives the
// normalised dim and src's strides (kMaxTensorDim of them, scatter_src_strides).
Error start_scatter_src(const char* op, Span<EValue*> args, int32_t* dim, int64_t* src_strides);

// Calls fn(out_offset, src_offset) for every element of index, in row-major order of index:
// out_offset is the element of out (self's shape) at that position with coordinate `dim`
// replaced by the index value; src_offset is the same position in src (`src_strides`, one per
// index dim; zeros for a scalar src).
template <typename Fn>
void for_each_scatter(const Tensor& index, const Tensor& out, int32_t dim,
                      const int64_t* src_strides, Fn&& fn) {
  const int32_t rank = index.dim();
  if (index.numel() == 0) return;
  int64_t pos[kMaxTensorDim] = {0};
  const int64_t dim_stride = out.dim() == 0 ? 0 : out.stride(dim);
  int64_t io = 0, o = 0, s = 0;
  for (int64_t e = 0; e < index.numel(); ++e) {
    fn(o + load_index(index, io) * dim_stride, s);
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int64_t os = d == dim || d >= out.dim() ? 0 : out.stride(d);
      if (++pos[d] < index.size(d)) {
        io += index.stride(d);
        o += os;
        s += src_strides[d];
        break;
      }
      io -= static_cast<int64_t>(index.stride(d)) * (index.size(d) - 1);
      o -= os * (index.size(d) - 1);
      s -= src_strides[d] * (index.size(d) - 1);
      pos[d] = 0;
    }
  }
}

}  // namespace pteron
