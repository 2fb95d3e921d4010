// Chooses the QLinearKernels table once from what the CPU reports (x86: AVX-512 BW + VNNI,
// then AVX2, capped by PTERON_ISA through x86_level_allowed(); aarch64: the dot-product
// extension), the scalar table otherwise.
#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "runtime/platform/cpu_isa.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace pteron::opt {

namespace qscalar {
extern const QLinearKernels kTable;
}
#if defined(__x86_64__)
namespace qavx512 {
extern const QLinearKernels kTable;
}
namespace qavx2 {
extern const QLinearKernels kTable;
}
#endif
#if defined(__aarch64__) && defined(__linux__)
namespace qneondot {
extern const QLinearKernels kTable;
}
#endif

int supported_qlinear_kernels(const QLinearKernels** out, int capacity) {
  int n = 0;
  auto add = [&](const QLinearKernels& t) {
    if (n < capacity) out[n++] = &t;
  };
#if defined(__x86_64__)
  const X86Level level = x86_level_allowed();
  if (level >= X86Level::Avx512 && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vnni")) {
    add(qavx512::kTable);
  }
  if (level >= X86Level::Avx2) add(qavx2::kTable);
#endif
#if defined(__aarch64__) && defined(__linux__)
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0) add(qneondot::kTable);
#endif
  add(qscalar::kTable);
  return n;
}

const QLinearKernels& qlinear_kernels() {
  static const QLinearKernels* best = [] {
    const QLinearKernels* tables[4];
    supported_qlinear_kernels(tables, 4);
    return tables[0];
  }();
  return *best;
}

}  // namespace pteron::opt
