// Splits [0, n) into contiguous blocks, one per thread of the shared pool (or one block on the
// caller when the work is small), so each block can own a slice of scratch memory: per-block
// row buffers that a pool worker may not allocate itself.
#pragma once

#include <pthreadpool.h>

#include <cstdint>

#include "kernels/optimized/util/parallel.h"
#include "runtime/threads/threadpool.h"

namespace pteron::opt {

// How many blocks parallel_blocks will use for n items of `work_per_item` units each.
inline int64_t block_count(int64_t n, int64_t work_per_item) {
  if (n <= 1 || n * work_per_item < kMinParallelWork) return 1;
  pthreadpool_t pool = shared_threadpool();
  if (pool == nullptr) return 1;
  const int64_t threads = static_cast<int64_t>(pthreadpool_get_threads_count(pool));
  return threads < n ? threads : n;
}

// Runs fn(block, begin, end) for `blocks` (from block_count) contiguous blocks of [0, n).
template <typename Fn>
void parallel_blocks(int64_t n, int64_t blocks, Fn&& fn) {
  if (blocks <= 1) {
    fn(int64_t{0}, int64_t{0}, n);
    return;
  }
  struct Ctx {
    Fn* fn;
    int64_t n, blocks;
  } ctx{&fn, n, blocks};
  pthreadpool_parallelize_1d(
      shared_threadpool(),
      [](void* p, size_t b) {
        const Ctx& c = *static_cast<const Ctx*>(p);
        const int64_t i = static_cast<int64_t>(b);
        (*c.fn)(i, c.n* i / c.blocks, c.n * (i + 1) / c.blocks);
      },
      &ctx, static_cast<size_t>(blocks), pool_call_flags());
}

}  // namespace pteron::opt
