#include "runtime/platform/cpu_isa.h"

#if defined(__x86_64__)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace pteron {
namespace {

#if defined(__x86_64__)
X86Level cpu_level() {
  __builtin_cpu_init();
  // AVX-512 paths also use VL forms (the portable GEMM tile), so both are required.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma"))
    return X86Level::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return X86Level::Avx2;
  return X86Level::Baseline;
}

X86Level decide() {
  const X86Level cpu = cpu_level();
  const char* forced = std::getenv("PTERON_ISA");
  if (forced == nullptr || *forced == '\0') return cpu;
  X86Level want;
  if (std::strcmp(forced, "avx512") == 0) {
    want = X86Level::Avx512;
  } else if (std::strcmp(forced, "avx2") == 0) {
    want = X86Level::Avx2;
  } else if (std::strcmp(forced, "baseline") == 0 || std::strcmp(forced, "scalar") == 0) {
    want = X86Level::Baseline;
  } else {
    std::fprintf(stderr,
                 "pteron: warning: PTERON_ISA=%s is not one of avx512, avx2, baseline; using the "
                 "CPU's best\n",
                 forced);
    return cpu;
  }
  // A level the CPU lacks cannot be forced: it would fault on the first instruction.
  if (want > cpu) {
    std::fprintf(stderr, "pteron: warning: PTERON_ISA=%s is beyond this CPU; using %s\n", forced,
                 cpu == X86Level::Avx2 ? "avx2" : "baseline");
    return cpu;
  }
  return want;
}
#endif

}  // namespace

X86Level x86_level_allowed() {
#if defined(__x86_64__)
  static const X86Level level = decide();
  return level;
#else
  return X86Level::Baseline;
#endif
}

bool int8_dot_product_allowed() {
#if defined(__x86_64__)
  static const bool allowed = x86_level_allowed() >= X86Level::Avx512 &&
                              __builtin_cpu_supports("avx512bw") &&
                              __builtin_cpu_supports("avx512vnni");
  return allowed;
#elif defined(__aarch64__) && defined(__linux__)
  static const bool allowed = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return allowed;
#else
  return false;
#endif
}

const char* cpu_isa_name() {
#if defined(__x86_64__)
  switch (x86_level_allowed()) {
    case X86Level::Avx512:
      return "avx512";
    case X86Level::Avx2:
      return "avx2";
    case X86Level::Baseline:
      break;
  }
  return "baseline";
#elif defined(__aarch64__) && defined(__ARM_NEON)
  return "neon";
#else
  return "scalar";
#endif
}

}  // namespace pteron
