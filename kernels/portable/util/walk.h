// Strided walk over N operands of one elementwise iteration (operand 0 is the output).
//
// The walk is planned the way TensorIterator does it: dims are ordered by the output's memory
// order (so a channels-last output is walked in memory order), size-1 dims are dropped and
// adjacent dims that are contiguous in every operand are merged. Same-layout operands thus
// become one long contiguous row, and the callback's inner loop stays vectorisable.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

template <int N>
struct RowPlan {
  int32_t dim = 0;                    // rank after merging; the last dim is the row
  int64_t sizes[kMaxTensorDim];       // sizes[dim - 1] is the row length
  int64_t strides[N][kMaxTensorDim];  // per operand, in elements, 0 on broadcast dims
  bool empty = false;                 // some size is 0: nothing to visit
};

// Plans a walk over `sizes` (rank `dim`). strides[k] holds operand k's strides aligned to
// `sizes` (see broadcast_strides), with operand 0 the output.
template <int N>
RowPlan<N> plan_rows(const int32_t* sizes, int32_t dim, const int64_t* const* strides) {
  RowPlan<N> p;
  // Order dims outermost-first by the output's strides (insertion sort, stable: ties keep
  // logical order). Dims of size 1 are dropped, so their strides do not matter.
  int32_t order[kMaxTensorDim];
  int32_t n = 0;
  for (int32_t d = 0; d < dim; ++d) {
    if (sizes[d] == 0) p.empty = true;
    if (sizes[d] == 1) continue;
    int32_t i = n++;
    while (i > 0 && strides[0][order[i - 1]] < strides[0][d]) {
      order[i] = order[i - 1];
      --i;
    }
    order[i] = d;
  }
  for (int32_t i = 0; i < n; ++i) {
    const int32_t d = order[i];
    if (p.dim > 0) {
      // Merge into the previous (outer) dim when every operand steps over it contiguously.
      const int32_t prev = p.dim - 1;
      bool mergeable = true;
      for (int k = 0; k < N; ++k)
        mergeable = mergeable && p.strides[k][prev] == strides[k][d] * sizes[d];
      if (mergeable) {
        p.sizes[prev] *= sizes[d];
        for (int k = 0; k < N; ++k) p.strides[k][prev] = strides[k][d];
        continue;
      }
    }
    p.sizes[p.dim] = sizes[d];
    for (int k = 0; k < N; ++k) p.strides[k][p.dim] = strides[k][d];
    ++p.dim;
  }
  if (p.dim == 0) {  // a single element
    p.dim = 1;
    p.sizes[0] = 1;
    for (int k = 0; k < N; ++k) p.strides[k][0] = 0;
  }
  return p;
}

// Calls fn(offsets, n, steps) once per row of a planned walk: offsets[k] is operand k's first
// element of the row, steps[k] its stride along the row (1 when contiguous), n the row length.
template <int N, typename Fn>
void for_each_row(const RowPlan<N>& p, Fn&& fn) {
  if (p.empty) return;
  const int32_t inner = p.dim - 1;
  int64_t steps[N];
  int64_t offsets[N] = {0};
  for (int k = 0; k < N; ++k) steps[k] = p.strides[k][inner];
  int64_t index[kMaxTensorDim] = {0};
  while (true) {
    fn(static_cast<const int64_t*>(offsets), p.sizes[inner], static_cast<const int64_t*>(steps));
    int32_t d = inner - 1;
    for (; d >= 0; --d) {
      ++index[d];
      for (int k = 0; k < N; ++k) offsets[k] += p.strides[k][d];
      if (index[d] < p.sizes[d]) break;
      for (int k = 0; k < N; ++k) offsets[k] -= p.strides[k][d] * p.sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace pteron
