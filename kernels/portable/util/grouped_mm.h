// Checks shared by the portable and optimized kernels of aten::_grouped_mm and
// transformers::grouped_mm_fallback (kernels/portable/op_grouped_mm.cpp says what they compute).
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Fails unless self is [S, K], mat2 [G, K, N], offs G int32/int64 values rising from 0 to at
// most S, self, mat2 and out of one floating dtype and out [S, N].
Error check_grouped_mm(const char* op, const Tensor& self, const Tensor& mat2, const Tensor* offs,
                       Tensor& out);

// Fails unless offs is G int32/int64 values rising from 0 to at most S (the rows).
Error check_grouped_offsets(const char* op, const Tensor& offs, int64_t G, int64_t S);

// offs[g] (int32 or int64): the end of group g's rows.
int64_t grouped_mm_end(const Tensor& offs, int64_t g);

// Calls run(g, first_row, rows) for each of the `groups` groups that has rows, in order (offs
// already checked); returns the end of the last group: rows from there on belong to none.
template <typename Run>
int64_t for_each_group(const Tensor& offs, int64_t groups, Run&& run) {
  int64_t start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = grouped_mm_end(offs, g);
    if (end > start) run(g, start, end - start);
    start = end;
  }
  return start;
}

}  // namespace pteron
