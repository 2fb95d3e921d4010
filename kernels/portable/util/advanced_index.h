// Advanced indexing, self[i0, :, i2], shared by index.Tensor (read) and index_put (write): int
// index tensors (negative values count from the end) that broadcast to one shape B, and None
// entries (or missing trailing ones) meaning ":". When the indexed dims are adjacent, B
// replaces them in place; otherwise B goes first, as in numpy. A bool mask is the same as its
// nonzero() coordinates, expanded into int64 index tensors in scratch memory. Every index is
// checked before the caller moves an element.
#pragma once

#include <cstdint>

#include "kernels/portable/util/index_util.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// The indexed view's shape: result = [A dims (slices before B)] [B] [C dims (other slices)].
// Holds the expanded masks itself, so it must stay where plan_advanced_index built it.
struct AdvancedIndex {
  const Tensor* index[kMaxTensorDim] = {};  // per self dim; nullptr = full slice
  int32_t count = 0;                        // index tensors (0: the whole of self)
  int32_t b_dim = 0;
  int32_t b_sizes[kMaxTensorDim];
  int32_t na = 0, nc = 0;
  int32_t a_dims[kMaxTensorDim], c_dims[kMaxTensorDim];
  int32_t result_dim = 0;
  int32_t result_sizes[kMaxTensorDim];
  // Storage for the int64 coordinates of bool masks.
  Tensor mask_storage[kMaxTensorDim];
  int32_t mask_sizes[kMaxTensorDim], mask_strides[kMaxTensorDim];
  uint8_t mask_orders[kMaxTensorDim];
};

// Resolves `indices` against `self` into `plan`, checking dtypes, shapes and every index value
// (messages name `op`).
Error plan_advanced_index(KernelContext& ctx, const char* op, const Tensor& self,
                          Span<Tensor* const> indices, AdvancedIndex* plan);

// Walks every (A, B) position of the result: fn(self_offset, result_offset) with the element
// offset of that position's C block in self (with `self_strides`, one per self dim: self's or
// an equally shaped tensor's) and in the result (with `result_strides`, one per result dim).
// The C block itself is the caller's: sizes self.size(c_dims[k]), strides self_strides[c_dims[k]]
// and result_strides[na + b_dim + k].
template <typename Fn>
void for_each_index_position(const AdvancedIndex& plan, const Tensor& self,
                             const int64_t* self_strides, const int64_t* result_strides, Fn&& fn) {
  int64_t walk_size[kMaxTensorDim], walk_result[kMaxTensorDim], walk_self[kMaxTensorDim];
  int64_t walk_idx[kMaxTensorDim][kMaxTensorDim];  // [index tensor][walk dim]
  const Tensor* used[kMaxTensorDim];
  int64_t used_stride[kMaxTensorDim];  // self stride of the dim each index tensor indexes
  int64_t used_size[kMaxTensorDim];
  int32_t nu = 0;
  for (int32_t s = 0; s < self.dim(); ++s) {
    if (plan.index[s] == nullptr) continue;
    used[nu] = plan.index[s];
    used_stride[nu] = self_strides[s];
    used_size[nu++] = self.size(s);
  }
  // The (A, B) dims of the result, less those of size 1 (they move nothing: unfold's index
  // shapes end in several).
  int32_t walk_dim = 0;
  for (int32_t w = 0; w < plan.na + plan.b_dim; ++w) {
    if (plan.result_sizes[w] == 0) return;
    if (plan.result_sizes[w] == 1) continue;
    walk_size[walk_dim] = plan.result_sizes[w];
    walk_result[walk_dim] = result_strides[w];
    walk_self[walk_dim] = w < plan.na ? self_strides[plan.a_dims[w]] : 0;
    for (int32_t u = 0; u < nu; ++u) {
      const Tensor& t = *used[u];
      const int32_t bk = w - plan.na;                  // dim of B
      const int32_t tk = bk - (plan.b_dim - t.dim());  // dim of t, right-aligned
      walk_idx[u][walk_dim] = (w < plan.na || tk < 0 || t.size(tk) == 1) ? 0 : t.stride(tk);
    }
    ++walk_dim;
  }
  if (walk_dim == 0) {  // a single position
    walk_size[0] = 1, walk_result[0] = walk_self[0] = 0;
    for (int32_t u = 0; u < nu; ++u) walk_idx[u][0] = 0;
    walk_dim = 1;
  }
  // The innermost dim runs as one loop per position of the others (an odometer).
  const int32_t inner = walk_dim - 1;
  const int64_t n = walk_size[inner];
  // Each index tensor's data and width, read once (not through the Tensor per element).
  const void* index_data[kMaxTensorDim];
  bool index_long[kMaxTensorDim];
  for (int32_t u = 0; u < nu; ++u) {
    index_data[u] = used[u]->const_data();
    index_long[u] = used[u]->dtype() == ScalarType::Long;
  }
  int64_t pos[kMaxTensorDim] = {0}, r = 0, s0 = 0, io[kMaxTensorDim] = {0};
  while (true) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = s0 + i * walk_self[inner];
      for (int32_t u = 0; u < nu; ++u) {
        const int64_t at = io[u] + i * walk_idx[u][inner];
        int64_t v = index_long[u] ? static_cast<const int64_t*>(index_data[u])[at]
                                  : static_cast<const int32_t*>(index_data[u])[at];
        if (v < 0) v += used_size[u];
        src += v * used_stride[u];
      }
      fn(src, r + i * walk_result[inner]);
    }
    int32_t w = inner - 1;
    for (; w >= 0; --w) {
      if (++pos[w] < walk_size[w]) {
        r += walk_result[w];
        s0 += walk_self[w];
        for (int32_t u = 0; u < nu; ++u) io[u] += walk_idx[u][w];
        break;
      }
      r -= walk_result[w] * (walk_size[w] - 1);
      s0 -= walk_self[w] * (walk_size[w] - 1);
      for (int32_t u = 0; u < nu; ++u) io[u] -= walk_idx[u][w] * (walk_size[w] - 1);
      pos[w] = 0;
    }
    if (w < 0) break;
  }
}

}  // namespace pteron
