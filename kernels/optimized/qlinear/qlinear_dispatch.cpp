// Chooses the QLinearKernels table once from what the CPU reports (the 8-bit dot products of
// int8_dot_product_allowed(): AVX-512 BW + VNNI or aarch64's dot-product extension; then AVX2;
// capped by PTERON_ISA through x86_level_allowed()), the scalar table otherwise.
#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "runtime/platform/cpu_isa.h"

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
  if (int8_dot_product_allowed()) add(qavx512::kTable);
  if (x86_level_allowed() >= X86Level::Avx2) add(qavx2::kTable);
#endif
#if defined(__aarch64__) && defined(__linux__)
  if (int8_dot_product_allowed()) add(qneondot::kTable);
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
