// Small checks shared by the optimized matmul kernels: which calls the float32 SGEMM takes.
#pragma once

#include <initializer_list>

#include "runtime/core/tensor.h"

namespace pteron::optimized {

// True when every tensor given (nulls skipped) is float32.
inline bool all_float32(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t != nullptr && t->dtype() != ScalarType::Float) return false;
  return true;
}

// A bias the GEMM can add per column: N contiguous values, as a [N] or [1, N] tensor.
inline bool is_column_bias(const Tensor& bias, int64_t n) {
  if (bias.numel() != n || bias.dim() < 1 || bias.dim() > 2) return false;
  return bias.size(bias.dim() - 1) == n && (n == 1 || bias.stride(bias.dim() - 1) == 1);
}

}  // namespace pteron::optimized
