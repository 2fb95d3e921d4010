// Layout checks for kernels that index NCHW / row-major data directly.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

// True when element (i0, i1, ...) sits at the row-major offset, whatever the dim order says:
// dims of size 1 may be ordered anywhere (a 1x1 spatial tensor is both NCHW and NHWC).
inline bool is_row_major(const Tensor& t) {
  int64_t expected = 1;
  for (int32_t d = t.dim() - 1; d >= 0; --d) {
    if (t.size(d) != 1 && t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

}  // namespace pteron
