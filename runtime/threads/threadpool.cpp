#include "runtime/threads/threadpool.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace pteron {
namespace {

std::atomic<int> g_threads{0};

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
