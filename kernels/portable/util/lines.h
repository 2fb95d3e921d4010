// Walking the 1-D lines of tensors along one dim (sort, topk): every index with index[dim] == 0.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

// Calls fn(offsets) for every index of `sizes` (rank `rank`) whose coordinate along `dim` is 0;
// offsets[t] is that index's element offset in tensor ts[t] (each walked with its own
// strides, so any dim order works). Nothing when a size other than dim's is 0.
template <int N, typename Fn>
void for_each_line(const int32_t* sizes, int32_t rank, int32_t dim, const Tensor* const (&ts)[N],
                   Fn&& fn) {
  for (int32_t d = 0; d < rank; ++d)
    if (d != dim && sizes[d] == 0) return;
  int64_t idx[kMaxTensorDim] = {0};
  int64_t off[N] = {0};
  while (true) {
    fn(static_cast<const int64_t*>(off));
    int32_t d = rank - 1;
    for (; d >= 0; --d) {
      if (d == dim) continue;
      if (++idx[d] < sizes[d]) {
        for (int t = 0; t < N; ++t) off[t] += ts[t]->stride(d);
        break;
      }
      for (int t = 0; t < N; ++t) off[t] -= ts[t]->stride(d) * (sizes[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace pteron
