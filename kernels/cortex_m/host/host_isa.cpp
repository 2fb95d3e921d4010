#include "kernels/cortex_m/host/host_isa.h"

#include <atomic>

#include "runtime/platform/cpu_isa.h"

namespace pteron::cortex_m::host {

bool has_avx2() {
#if defined(__x86_64__)
  static const bool yes = x86_level_allowed() >= X86Level::Avx2 && __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

bool has_avx512() {
#if defined(__x86_64__)
  static const bool yes = x86_level_allowed() >= X86Level::Avx512 &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return yes;
#else
  return false;
#endif
}

namespace {
std::atomic<bool> g_host_paths{true};
}  // namespace

bool host_paths_enabled() { return g_host_paths.load(std::memory_order_relaxed); }
void set_host_paths_enabled(bool on) { g_host_paths.store(on, std::memory_order_relaxed); }

}  // namespace pteron::cortex_m::host
