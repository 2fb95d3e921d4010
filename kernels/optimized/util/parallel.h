// Splits [0, n) into chunks run on the shared thread pool (runtime/threads), or inline when the
// work is too small to pay for waking threads. `fn(begin, end)` must be safe to run
// concurrently on disjoint ranges.
#pragma once

#include <pthreadpool.h>

#include <cstdint>
#include <type_traits>

#include "runtime/threads/threadpool.h"

namespace pteron::opt {

// Below this many multiply-adds (or element operations) in total, work runs on the caller's
// thread. Waking the pool costs a few microseconds on idle cores, but the call returns only
// when the woken worker has run, and on contended cores (2 threads on 2 busy CPUs) that waits
// for a scheduler slice, milliseconds: OPT-125M's layer norms ([128, 768], ~50 us of work)
// took 5 ms each with 2 threads at load average 11. Work below ~1M units (a few hundred
// microseconds) is not worth that risk; the GEMMs and attention stay threaded.
constexpr int64_t kMinParallelWork = 1 << 20;

template <typename Fn>
void parallel_for(int64_t n, int64_t work_per_item, Fn&& fn) {
  pthreadpool_t pool =
      n > 1 && n * work_per_item >= kMinParallelWork ? shared_threadpool() : nullptr;
  if (pool == nullptr) {
    fn(int64_t{0}, n);
    return;
  }
  // About four chunks per thread keeps threads busy when chunks take uneven time.
  const int64_t threads = static_cast<int64_t>(pthreadpool_get_threads_count(pool));
  int64_t chunk = (n + threads * 4 - 1) / (threads * 4);
  if (chunk < 1) chunk = 1;
  struct Ctx {
    std::remove_reference_t<Fn>* fn;  // Fn may be deduced as an lvalue reference
    int64_t n, chunk;
  } ctx{&fn, n, chunk};
  const size_t chunks = static_cast<size_t>((n + chunk - 1) / chunk);
  pthreadpool_parallelize_1d(
      pool,
      [](void* p, size_t c) {
        const Ctx& x = *static_cast<const Ctx*>(p);
        const int64_t begin = static_cast<int64_t>(c) * x.chunk;
        const int64_t end = begin + x.chunk < x.n ? begin + x.chunk : x.n;
        (*x.fn)(begin, end);
      },
      &ctx, chunks, pool_call_flags());
}

// An elementwise loop over n elements costing about `cost` operations each, in chunks of 4096
// (big enough that a chunk outweighs handing it to a thread): fn(first, count) per chunk.
template <typename Fn>
void parallel_elementwise(int64_t n, int64_t cost, Fn&& fn) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, kChunk * cost, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kChunk, hi = end * kChunk < n ? end * kChunk : n;
    fn(lo, hi - lo);
  });
}

}  // namespace pteron::opt
