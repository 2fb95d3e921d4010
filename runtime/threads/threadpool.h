// One process-wide thread setting for everything that runs work in parallel on a hosted target:
// the optimized kernels and the XNNPACK delegate share it, so `pteron run --threads 2` means two
// threads for the whole program, not two per library. Hosted builds only (pthreadpool).
#pragma once

#include <pthreadpool.h>

#include <cstdint>

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

// What the pool's workers do when a parallel call ends: spin, waiting for the next one
// (pthreadpool's default, as under XNNPACK in ExecuTorch, OpenMP in PyTorch and llama.cpp), or go
// to sleep at once. A sleeping worker is woken through the kernel at the next call, tens of
// microseconds on an idle core, which short operators (a 60 us pad at 2 threads, a decode
// step's matrix-vector products) pay on every call; a spinning one starts within a microsecond,
// for up to pthreadpool's spin limit (milliseconds) of a core's time after each call. Sleeping
// is worth it only where other processes need those cores (a machine loaded above its core
// count). Default: spin; the environment variable PTERON_SPIN_WORKERS=0 makes workers sleep.
void set_spin_workers(bool spin);
bool spin_workers();

// The pthreadpool flags of a parallel call under that setting (0, or
// PTHREADPOOL_FLAG_YIELD_WORKERS when workers sleep).
uint32_t pool_call_flags();

}  // namespace pteron
