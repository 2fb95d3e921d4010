#include "kernels/optimized/util/output_activation.h"

#include "kernels/optimized/simd/isa_kernels.h"

namespace pteron::optimized {

float OutputActivation::apply(float v) const {
  v = clamp(v);
  if (!silu) return v;
  // The vector SiLU's own arithmetic, so that scalar and vector paths agree.
  float y;
  opt::isa_kernels().silu_mul(&v, nullptr, &y, 1);
  return y;
}

void OutputActivation::apply_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const {
  const opt::IsaKernels& isa = opt::isa_kernels();
  if (clamps()) {
    for (int64_t i = 0; i < rows; ++i) isa.clamp(c + i * rs, cols, lo, hi);
  }
  apply_silu_rows(c, rs, rows, cols);
}

void OutputActivation::apply_silu_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const {
  if (!silu) return;
  const opt::IsaKernels& isa = opt::isa_kernels();
  for (int64_t i = 0; i < rows; ++i, c += rs) isa.silu_mul(c, nullptr, c, cols);
}

}  // namespace pteron::optimized
