// Shape and index helpers shared by portable kernels: broadcasting, stride walking, and
// reading any element as a compute type.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Output shape of broadcasting a and b (numpy rules). Fails with a message naming `op`.
Error broadcast_shape(const char* op, const Tensor& a, const Tensor& b, int32_t* out_sizes,
                      int32_t* out_dim);

// Output shape of broadcasting every tensor in `ts` together (rank up to kMaxTensorDim).
Error broadcast_shapes(const char* op, Span<const Tensor* const> ts, int32_t* out_sizes,
                       int32_t* out_dim);

// Checks that `out` has exactly `sizes` (resizing it if it is dynamic), naming `op` on failure.
Error expect_out_shape(const char* op, Tensor& out, const int32_t* sizes, int32_t dim);

// Strides of `t` (in elements) aligned to an output of rank `out_dim`, 0 on broadcast dims.
void broadcast_strides(const Tensor& t, const int32_t* out_sizes, int32_t out_dim,
                       int64_t* strides);

// Walks every element of an output of shape `sizes`, calling
// fn(out_offset, a_offset, b_offset, count, out_step, a_step, b_step) once per innermost row,
// with element offsets derived from the given strides. Keeps the inner loop contiguous so
// kernels stay vectorisable.
template <typename Fn>
void for_each_row3(const int32_t* sizes, int32_t dim, const int64_t* out_strides,
                   const int64_t* a_strides, const int64_t* b_strides, Fn&& fn) {
  if (dim == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  for (int32_t d = 0; d < dim; ++d)
    if (sizes[d] == 0) return;
  int64_t index[kMaxTensorDim] = {0};
  const int32_t inner = dim - 1;
  int64_t o = 0, a = 0, b = 0;
  while (true) {
    fn(o, a, b, static_cast<int64_t>(sizes[inner]), out_strides[inner], a_strides[inner],
       b_strides[inner]);
    int32_t d = inner - 1;
    for (; d >= 0; --d) {
      ++index[d];
      o += out_strides[d];
      a += a_strides[d];
      b += b_strides[d];
      if (index[d] < sizes[d]) break;
      o -= out_strides[d] * sizes[d];
      a -= a_strides[d] * sizes[d];
      b -= b_strides[d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Element `offset` of `t` converted to double (any supported dtype). For mixed-dtype slow paths.
double load_as_double(const Tensor& t, int64_t offset);
// Stores `v` into element `offset` of `t`, converting to its dtype.
void store_from_double(Tensor& t, int64_t offset, double v);

// Normalises a possibly negative dimension index; fails if out of [-dim, dim).
Error normalize_dim(const char* op, int64_t d, int32_t dim, int32_t* out);

}  // namespace pteron
