// Chooses the IsaKernels table once, from what the CPU reports at run time (capped by
// PTERON_ISA, runtime/platform/cpu_isa.h).
#include "kernels/optimized/simd/isa_kernels.h"
#include "runtime/platform/cpu_isa.h"

namespace pteron::opt {

#if defined(__x86_64__)
namespace avx512 {
extern const IsaKernels kTable;
}
namespace avx2 {
extern const IsaKernels kTable;
}
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
namespace neon {
extern const IsaKernels kTable;
}
namespace base = neon;
#else
namespace scalar {
extern const IsaKernels kTable;
}
namespace base = scalar;
#endif

int supported_isa_kernels(const IsaKernels** out, int capacity) {
  int n = 0;
  auto add = [&](const IsaKernels& t) {
    if (n < capacity) out[n++] = &t;
  };
#if defined(__x86_64__)
  const X86Level level = x86_level_allowed();  // the CPU's, or lower with PTERON_ISA
  if (level >= X86Level::Avx512) add(avx512::kTable);
  if (level >= X86Level::Avx2) add(avx2::kTable);
#endif
  add(base::kTable);
  return n;
}

const IsaKernels& isa_kernels() {
  static const IsaKernels* best = [] {
    const IsaKernels* tables[4];
    supported_isa_kernels(tables, 4);
    return tables[0];
  }();
  return *best;
}

}  // namespace pteron::opt
