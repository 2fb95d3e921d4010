// Checks the optimized convolution kernels share once the shape is known: the bias length, the
// output's shape (resizing a dynamic output) and the residual's shape (the fused add), each
// failing with one line naming `op`. `dim` is the input's rank: 4 (2-D convolution) or 3 (1-D).
#pragma once

#include "kernels/portable/util/conv.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron::optimized {

Error check_conv_output(const char* op, const ConvShape& s, const Tensor* bias, Tensor& out,
                        const Tensor* residual, int32_t dim = 4);

}  // namespace pteron::optimized
