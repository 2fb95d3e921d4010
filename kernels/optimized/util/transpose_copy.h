// A copy of 4-byte elements that moves the input's contiguous dim away from the innermost
// position (a permute, a dim-order change such as NCHW <-> NHWC at a delegate's boundary): a
// batch of 2-D transposes of strips, this CPU's SIMD transposes on threads; or, where that dim
// stays innermost, a batch of row copies on threads.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron::optimized {

struct TransposeCopy {
  const float* in = nullptr;  // 4-byte elements moved as floats: bit for bit, NaNs included
  float* out = nullptr;
  int32_t rank = 0;
  // Per output dim, outermost first in the output's memory order: its size and the strides
  // (elements) of one step along it in the input and in the output.
  int64_t sizes[kMaxTensorDim] = {};
  int64_t in_strides[kMaxTensorDim] = {};
  int64_t out_strides[kMaxTensorDim] = {};
  // The output dim along which the input is contiguous (in_strides[a] == 1); the output's
  // innermost, rank - 1 (out_strides[rank - 1] == 1), is another.
  int32_t a = -1;
};

// Whether `t` describes such a copy (a set, not the output's innermost, unit strides there).
bool is_transpose_copy(const TransposeCopy& t);

// Runs the copy over this runtime's threads. `t` must satisfy is_transpose_copy.
void run_transpose_copy(const TransposeCopy& t);

// The other case: the input's contiguous dim stays the output's innermost (a transformer's head
// split [B, L, H, D] -> [B, H, L, D]), so the copy is whole rows: dims contiguous in both
// merged, the rows split over this runtime's threads. False, having copied nothing, when the
// innermost output dim of more than one element is not the input's contiguous one (a size-1
// innermost dim hid it).
bool run_row_copy(const TransposeCopy& t);

}  // namespace pteron::optimized
