// tril / triu: copy self, then zero the part of each matrix (last two dims) outside the
// triangle. Row i keeps columns j <= i + diagonal (lower) or j >= i + diagonal (upper).
#pragma once

#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

inline Error triangle_out(const char* op, Span<EValue*> args, bool lower) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(self.dim() >= 2, Error::InvalidArgument, "%s: needs at least 2 dims, got %d", op,
               static_cast<int>(self.dim()));
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  PTERON_TRY(copy_tensor(op, self, out));
  if (out.numel() == 0) return Error::Ok;
  const int32_t rank = out.dim();
  const int64_t rows = out.size(rank - 2), cols = out.size(rank - 1);
  // Beyond +-(rows + cols) every diagonal keeps or zeroes the same; clamping keeps i + diagonal
  // from overflowing for any int64 the program holds.
  const int64_t limit = rows + cols;
  const int64_t diagonal = args[1]->i > limit ? limit : args[1]->i < -limit ? -limit : args[1]->i;
  const int64_t rs = out.stride(rank - 2), cs = out.stride(rank - 1);
  const size_t esize = out.element_size();
  char* base = static_cast<char*>(out.mutable_data());
  // Every matrix: walk the batch dims with out's strides.
  int64_t idx[kMaxTensorDim] = {0};
  const int64_t batches = out.numel() / (rows * cols);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t off = 0;
    for (int32_t d = 0; d < rank - 2; ++d) off += idx[d] * out.stride(d);
    for (int64_t i = 0; i < rows; ++i) {
      // Zero columns [j0, j1).
      int64_t j0, j1;
      if (lower) {
        j0 = i + diagonal + 1;
        j1 = cols;
      } else {
        j0 = 0;
        j1 = i + diagonal;
      }
      j0 = j0 < 0 ? 0 : j0 > cols ? cols : j0;
      j1 = j1 < 0 ? 0 : j1 > cols ? cols : j1;
      if (j0 >= j1) continue;
      char* row = base + (off + i * rs) * static_cast<int64_t>(esize);
      if (cs == 1) {
        std::memset(row + j0 * static_cast<int64_t>(esize), 0, (j1 - j0) * esize);
      } else {
        for (int64_t j = j0; j < j1; ++j)
          std::memset(row + j * cs * static_cast<int64_t>(esize), 0, esize);
      }
    }
    for (int32_t d = rank - 3; d >= 0; --d) {
      if (++idx[d] < out.size(d)) break;
      idx[d] = 0;
    }
  }
  return Error::Ok;
}

}  // namespace pteron
