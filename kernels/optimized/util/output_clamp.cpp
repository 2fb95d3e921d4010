#include "kernels/optimized/util/output_clamp.h"

#include "kernels/optimized/simd/isa_kernels.h"

namespace pteron::optimized {

void OutputClamp::apply_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const {
  const opt::IsaKernels& isa = opt::isa_kernels();
  for (int64_t i = 0; i < rows; ++i, c += rs) isa.clamp(c, cols, lo, hi);
}

}  // namespace pteron::optimized
