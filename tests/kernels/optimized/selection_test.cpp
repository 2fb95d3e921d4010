// Which code the optimized kernels run on this CPU: the non-GEMM SIMD table and the SGEMM
// micro-kernel. Printed on every target; on aarch64 both must be NEON, so `make check-aarch64`
// (qemu-aarch64) shows that the NEON paths, not a scalar fallback, are what the other tests ran.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/sgemm.h"

namespace pteron {
namespace {

// The SGEMM's choice: the last supported entry (its table is ordered by speed).
const char* selected_sgemm_kernel() {
  int best = -1;
  for (int k = 0; k < optimized::sgemm_kernel_count(); ++k) {
    if (optimized::sgemm_kernel_supported(k)) best = k;
  }
  return best < 0 ? "" : optimized::sgemm_kernel_name(best);
}

TEST(OptimizedSelection, NeonOnAarch64) {
  const char* isa = opt::isa_kernels().name;
  const char* gemm = selected_sgemm_kernel();
  std::printf("optimized kernels selected: SIMD table '%s', SGEMM micro-kernel '%s'\n", isa, gemm);
  RecordProperty("simd_table", isa);
  RecordProperty("sgemm_kernel", gemm);
  EXPECT_STRNE(gemm, "");
#if defined(__aarch64__)
  EXPECT_STREQ(isa, "neon");
  EXPECT_STREQ(gemm, "neon");
#elif defined(__x86_64__)
  EXPECT_STRNE(isa, "neon");
  EXPECT_STRNE(gemm, "neon");
#endif
}

}  // namespace
}  // namespace pteron
