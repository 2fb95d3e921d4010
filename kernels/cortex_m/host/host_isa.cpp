#include "kernels/cortex_m/host/host_isa.h"

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

bool has_avx512_vnni() {
#if defined(__x86_64__)
  static const bool yes = has_avx512() && __builtin_cpu_supports("avx512vnni");
  return yes;
#else
  return false;
#endif
}

}  // namespace pteron::cortex_m::host
