// Visiting a tensor's elements in logical row-major order whatever its dim order (nonzero,
// masked_select, masked_scatter number elements that way).
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

// The element offset of logical index 0, 1, 2, ... of a walk over `sizes` with `strides`.
struct LogicalWalk {
  int32_t dim = 0;
  const int32_t* sizes = nullptr;
  int64_t strides[kMaxTensorDim] = {};
  int64_t index[kMaxTensorDim] = {};
  int64_t offset = 0;

  LogicalWalk(const int32_t* s, int32_t d, const int64_t* st) : dim(d), sizes(s) {
    for (int32_t i = 0; i < d; ++i) strides[i] = st[i];
  }
  // Over all of `t`, with its own strides.
  explicit LogicalWalk(const Tensor& t) : dim(t.dim()), sizes(t.sizes().data()) {
    for (int32_t i = 0; i < dim; ++i) strides[i] = t.stride(i);
  }
  void next() {
    for (int32_t d = dim - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < sizes[d]) return;
      offset -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
};

// A mask element as a bool: any non-zero byte is true (see load_value<bool>).
inline bool mask_at(const Tensor& mask, int64_t offset) {
  return static_cast<const uint8_t*>(mask.const_data())[offset] != 0;
}

}  // namespace pteron
