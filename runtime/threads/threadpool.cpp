#include "runtime/threads/threadpool.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace pteron {
namespace {

std::atomic<int> g_threads{0};

// -1: not decided yet (the environment decides on first use), 0: sleep, 1: spin.
std::atomic<int> g_spin{-1};

struct Pools {
  std::mutex mutex;
  pthreadpool_t by_count[kMaxThreads + 1] = {};
};

Pools& pools() {
  static Pools* p = new Pools;  // never destroyed: workers may outlive static destructors
  return *p;
}

}  // namespace

void set_num_threads(int threads) {
  if (threads < 0) threads = 0;
  if (threads > kMaxThreads) threads = kMaxThreads;
  g_threads.store(threads);
}

int num_threads() {
  const int chosen = g_threads.load();
  if (chosen > 0) return chosen;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw < 4 ? hw : 4);
}

int requested_num_threads() { return g_threads.load(); }

void set_spin_workers(bool spin) { g_spin.store(spin ? 1 : 0); }

bool spin_workers() {
  int spin = g_spin.load(std::memory_order_relaxed);
  if (spin < 0) {
    const char* env = std::getenv("PTERON_SPIN_WORKERS");
    spin = env != nullptr && std::strcmp(env, "0") == 0 ? 0 : 1;
    int undecided = -1;
    // A concurrent set_spin_workers() wins over the environment.
    if (!g_spin.compare_exchange_strong(undecided, spin)) spin = undecided;
  }
  return spin == 1;
}

uint32_t pool_call_flags() { return spin_workers() ? 0u : PTHREADPOOL_FLAG_YIELD_WORKERS; }

pthreadpool_t threadpool_for(int threads) {
  if (threads <= 1) return nullptr;
  if (threads > kMaxThreads) threads = kMaxThreads;
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.by_count[threads] == nullptr)
    p.by_count[threads] = pthreadpool_create(static_cast<size_t>(threads));
  return p.by_count[threads];
}

}  // namespace pteron
