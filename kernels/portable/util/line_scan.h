// Visiting every line of a tensor along one dim (the scans: cummax, cummin, logcumsumexp),
// with each operand's own strides, so any dim orders work.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

// Calls fn(offsets) for each line start (index 0 along `dim`); offsets[k] is the start's element
// offset in ts[k]. All tensors have the same shape.
template <int N, typename Fn>
void for_each_line(const Tensor* const (&ts)[N], int32_t dim, Fn&& fn) {
  const Tensor& t0 = *ts[0];
  for (int32_t d = 0; d < t0.dim(); ++d)
    if (t0.size(d) == 0) return;
  int64_t idx[kMaxTensorDim] = {0};
  while (true) {
    int64_t off[N];
    for (int k = 0; k < N; ++k) {
      off[k] = 0;
      for (int32_t d = 0; d < t0.dim(); ++d) off[k] += idx[d] * ts[k]->stride(d);
    }
    fn(off);
    int32_t d = t0.dim() - 1;
    for (; d >= 0; --d) {
      if (d == dim) continue;
      if (++idx[d] < t0.size(d)) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace pteron
