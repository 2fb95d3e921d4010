// One process-wide thread setting for everything that runs work in parallel on a hosted target:
// the optimized kernels and the XNNPACK delegate share it, so `pteron run --threads 2` means two
// threads for the whole program, not two per library. Hosted builds only (pthreadpool).
#pragma once

#include <pthreadpool.h>

namespace pteron {

// Threads for work started from now on; 0 returns to the default. Values above kMaxThreads
// are clamped.
void set_num_threads(int threads);

// What set_num_threads() chose, else the hardware concurrency capped at 4.
int num_threads();

// What set_num_threads() chose; 0 when nothing was set (then per-program settings, such as a
// delegate's "threads" compile spec, may choose).
int requested_num_threads();

constexpr int kMaxThreads = 64;

// A pool with `threads` workers, created on first use and kept for the life of the process
// (pools are shared, never destroyed under a running delegate). nullptr for 1 thread or when
// the pool cannot be created: callers then run on their own thread.
pthreadpool_t threadpool_for(int threads);

// threadpool_for(num_threads()).
inline pthreadpool_t shared_threadpool() { return threadpool_for(num_threads()); }

}  // namespace pteron
