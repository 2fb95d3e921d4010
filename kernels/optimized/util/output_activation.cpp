#include "kernels/optimized/util/output_activation.h"

#include "kernels/optimized/simd/isa_kernels.h"

namespace pteron::optimized {

float OutputActivation::apply(float v) const {
  v = clamp(v);
  // The vector functions' own arithmetic, so that scalar and vector paths agree.
  apply_function_rows(&v, 0, 1, 1);
  return v;
}

void OutputActivation::apply_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const {
  const opt::IsaKernels& isa = opt::isa_kernels();
  if (clamps()) {
    for (int64_t i = 0; i < rows; ++i) isa.clamp(c + i * rs, cols, lo, hi);
  }
  apply_function_rows(c, rs, rows, cols);
}

void OutputActivation::apply_function_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const {
  const opt::IsaKernels& isa = opt::isa_kernels();
  switch (function) {
    case OutputFunction::kNone:
      return;
    case OutputFunction::kSilu:
      for (int64_t i = 0; i < rows; ++i, c += rs) isa.silu_mul(c, nullptr, c, cols);
      return;
    case OutputFunction::kHardswish:
      for (int64_t i = 0; i < rows; ++i, c += rs) isa.hard_activation(c, c, cols, true);
      return;
  }
}

}  // namespace pteron::optimized
