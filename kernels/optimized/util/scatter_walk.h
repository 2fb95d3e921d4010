// Row-major gather and scatter walks for the optimized gather / scatter / scatter_add /
// scatter_reduce kernels, split over threads so that results equal the portable kernels':
//
// - index is [outer, k, inner] around `dim`, self and out [outer, size, inner], src
//   [outer, src_k, inner], all row-major (index's sizes outside `dim` equal self's and src's;
//   anything else is the portable kernel's).
// - A scatter writes out[o, index[o, k, i], i] for src[o, k, i]. Entries with different (o, i)
//   never meet, so columns (o, a block of i) can go to different threads as long as each column
//   visits k in order: every out element is written by one thread, in the portable kernel's
//   (index's row-major) order, so repeated indices resolve (last write wins) and float sums
//   round exactly as there. A 1-D scatter is one column and runs on one thread: splitting it by
//   ranges of out would make every thread read every index, which measured slower than one
//   thread (a 2^20-entry scatter_add at load average 14: 3.2 ms CPU on one thread, 16.9 on two).
// - Index values are range-checked as they are read; a walk that meets a bad one returns false
//   and the kernel hands the call to the portable kernel, which reports it.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/portable/util/layout.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace pteron::opt {

struct ScatterGeometry {
  int64_t outer = 1, k = 1, inner = 1, size = 1, src_k = 1;
};

// True (and g filled) when self, index and src (when given) are row-major with index's rank,
// at least 1-D, and index's sizes equal theirs outside `dim`; index int32 or int64.
inline bool scatter_geometry(const Tensor& self, const Tensor& index, const Tensor* src,
                             int32_t dim, ScatterGeometry* g) {
  const int32_t rank = index.dim();
  if (rank == 0 || self.dim() != rank || (src != nullptr && src->dim() != rank)) return false;
  if (index.dtype() != ScalarType::Long && index.dtype() != ScalarType::Int) return false;
  if (!is_row_major(self) || !is_row_major(index) || (src != nullptr && !is_row_major(*src))) {
    return false;
  }
  ScatterGeometry r;
  for (int32_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    if (index.size(d) != self.size(d)) return false;
    if (src != nullptr && src->size(d) != index.size(d)) return false;
    (d < dim ? r.outer : r.inner) *= index.size(d);
  }
  r.k = index.size(dim);
  r.size = self.size(dim);
  r.src_k = src != nullptr ? src->size(dim) : r.k;
  if (src != nullptr && r.src_k < r.k) return false;
  *g = r;
  return true;
}

// (The walks copy what they read into locals: stores through the may_alias words of
// strided_copy.h could otherwise change anything reached through a pointer, which would be
// reloaded after every element.)
template <typename Idx, typename Fn>
bool scatter_columns(const ScatterGeometry& geometry, const Idx* index, int64_t o, int64_t i0,
                     int64_t i1, Fn fn) {
  const ScatterGeometry g = geometry;
  const uint64_t size = static_cast<uint64_t>(g.size);
  const int64_t out_base = o * g.size * g.inner;
  if (g.inner == 1) {  // scatter along the last dim: one index row
    const Idx* row = index + o * g.k;
    const int64_t src_base = o * g.src_k, k_end = g.k;
    for (int64_t k = 0; k < k_end; ++k) {
      const int64_t at = row[k];
      if (static_cast<uint64_t>(at) >= size) return false;
      fn(out_base + at, src_base + k);
    }
    return true;
  }
  for (int64_t k = 0; k < g.k; ++k) {
    const Idx* row = index + (o * g.k + k) * g.inner;
    const int64_t src_base = (o * g.src_k + k) * g.inner, inner = g.inner;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t at = row[i];
      if (static_cast<uint64_t>(at) >= size) return false;
      fn(out_base + at * inner + i, src_base + i);
    }
  }
  return true;
}

// Visits every entry of a scatter (fn(out_offset, src_offset)), each out element's entries on
// one thread in index order; false when an index is out of range. `work` is the cost of one
// entry in parallel.h's units.
template <typename Idx, typename Fn>
bool scatter_walk(const ScatterGeometry& g, const Idx* index, int64_t work, Fn&& fn) {
  constexpr int64_t kColumns = 512, kMinColumns = 16;  // inner elements per column block
  const int64_t entries = g.outer * g.k * g.inner;
  const int64_t blocks = block_count(entries, work);
  int64_t width = kColumns;
  if (blocks > 1 && g.outer * ((g.inner + width - 1) / width) < 4 * blocks) {
    // Few rows: narrower column blocks, so that every thread gets some.
    const int64_t wanted = (4 * blocks + g.outer - 1) / g.outer;
    width = (g.inner + wanted - 1) / wanted;
    if (width < kMinColumns) width = kMinColumns;
  }
  const int64_t per_row = (g.inner + width - 1) / width;
  const int64_t tasks = g.outer * per_row;
  std::atomic<bool> ok{true};
  auto run_tasks = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1 && ok.load(std::memory_order_relaxed); ++t) {
      const int64_t o = t / per_row, i0 = (t % per_row) * width;
      const int64_t i1 = i0 + width < g.inner ? i0 + width : g.inner;
      if (!scatter_columns(g, index, o, i0, i1, fn)) ok.store(false, std::memory_order_relaxed);
    }
  };
  if (blocks <= 1 || tasks == 1) {
    run_tasks(0, tasks);
  } else {
    parallel_for(tasks, entries / tasks * work, run_tasks);
  }
  return ok.load();
}

// out[o, k, i] = self[o, index[o, k, i], i] for gather (src_k unused); false when an index is
// out of range. Any split is fine: every out element is written once.
template <typename Idx, typename W>
bool gather_walk(const ScatterGeometry& geometry, const Idx* index, const W* self, W* out) {
  const ScatterGeometry g = geometry;
  std::atomic<bool> ok{true};
  parallel_for(g.outer * g.k, g.inner * 4, [&ok, g, index, self, out](int64_t r0, int64_t r1) {
    const Idx* const idx = index;  // locals (see scatter_columns)
    const W* const src = self;
    W* const dst_base = out;
    const uint64_t size = static_cast<uint64_t>(g.size);
    const int64_t inner = g.inner, k = g.k, plane = g.size * g.inner;
    // Rows r of index ([outer * k, inner]), a block of one outer index at a time.
    for (int64_t r = r0; r < r1;) {
      const int64_t o = r / k, end = (o + 1) * k < r1 ? (o + 1) * k : r1;
      const W* base = src + o * plane;
      if (inner == 1) {  // gather along the last dim
        for (; r < end; ++r) {
          const int64_t at = idx[r];
          if (static_cast<uint64_t>(at) >= size) {
            ok.store(false, std::memory_order_relaxed);
            return;
          }
          dst_base[r] = base[at];
        }
        continue;
      }
      for (; r < end; ++r) {
        const Idx* row = idx + r * inner;
        W* dst = dst_base + r * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row[i];
          if (static_cast<uint64_t>(at) >= size) {
            ok.store(false, std::memory_order_relaxed);
            return;
          }
          dst[i] = base[at * inner + i];
        }
      }
    }
  });
  return ok.load();
}

// memcpy split over threads (scatters start from a copy of self).
inline void parallel_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kChunk = 256 << 10;
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  parallel_for(chunks, static_cast<int64_t>(kChunk / 16), [&](int64_t c0, int64_t c1) {
    const size_t begin = static_cast<size_t>(c0) * kChunk;
    const size_t end =
        static_cast<size_t>(c1) * kChunk < bytes ? static_cast<size_t>(c1) * kChunk : bytes;
    std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin,
                end - begin);
  });
}

// The start of the optimized scatters (args self, dim, index, src or none, out): true when the
// fast path takes the call, with `dim` normalised, `g` filled, out sized as self and holding
// self's values (when out is self's memory, updated in place, the indices are checked first, so
// a bad one leaves it untouched). False: the portable kernel should run (other dtypes or
// layouts, an empty index, malformed arguments, whose messages are its own).
bool start_scatter(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                   const Tensor* src, Tensor& out, int32_t* dim, ScatterGeometry* g);

// A scatter of a source tensor, args (self, dim, index, src, out) as scatter.src_out and
// scatter_add.out take them, started with start_scatter: its tensors and geometry.
struct ScatterSrcCall {
  const Tensor* index = nullptr;
  const Tensor* src = nullptr;
  Tensor* out = nullptr;
  ScatterGeometry g;
};
bool start_scatter_src(const char* op, Span<EValue*> args, ScatterSrcCall* call);

// Calls fn(const IdxType* index) with index's data as int64_t or int32_t.
template <typename Fn>
decltype(auto) with_index(const Tensor& index, Fn&& fn) {
  return index.dtype() == ScalarType::Long ? fn(index.data<const int64_t>())
                                           : fn(index.data<const int32_t>());
}

}  // namespace pteron::opt
