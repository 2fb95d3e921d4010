// The write every KV-cache update makes (index_put with one index tensor, index_copy): rows
// of `src` go to indexed rows of `dst` along one dim. Both row-major, viewed as [outer, rows,
// inner]: dst [outer, dst_rows, inner], src [outer, n, inner]; src row (o, i) is copied to dst
// row (o, index[i]), `inner` bytes each, so a cache write moves only the rows written. Indices
// must have been checked to lie in [-dst_rows, dst_rows) (negative ones count from the end).
// Outer slices run on threads when the bytes pay; within one the rows go in index order, so
// a repeated index keeps the last row written, as the portable kernels do.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/index_util.h"

namespace pteron::opt {

struct RowScatter {
  char* dst;
  const char* src;
  int64_t outer, dst_rows, n;
  size_t inner_bytes;
};

inline void scatter_rows(const RowScatter& s, const Tensor& index) {
  const int64_t slice_bytes = s.n * static_cast<int64_t>(s.inner_bytes);
  parallel_for(s.outer, slice_bytes / 4, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      char* dst = s.dst + o * s.dst_rows * static_cast<int64_t>(s.inner_bytes);
      const char* src = s.src + o * slice_bytes;
      for (int64_t i = 0; i < s.n; ++i) {
        int64_t at = load_index(index, i);
        if (at < 0) at += s.dst_rows;
        std::memcpy(dst + at * static_cast<int64_t>(s.inner_bytes),
                    src + i * static_cast<int64_t>(s.inner_bytes), s.inner_bytes);
      }
    }
  });
}

// True when every index lies in [lo, rows): lo = -rows where negative indices are allowed.
inline bool indices_in_range(const Tensor& index, int64_t lo, int64_t rows) {
  for (int64_t i = 0; i < index.numel(); ++i) {
    const int64_t at = load_index(index, i);
    if (at < lo || at >= rows) return false;
  }
  return true;
}

}  // namespace pteron::opt
