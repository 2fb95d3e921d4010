// Depthwise float32 NCHW convolution (groups == in_channels == out_channels) for the optimized
// convolution: the portable kernel's padded-row walk (kernels/portable/util/depthwise_conv.h)
// with this CPU's SIMD row loop (IsaKernels::depthwise_row), over chunks of (image, channel)
// planes split over threads, and the activation that follows it clamped in the same pass.
#pragma once

#include "kernels/portable/util/conv.h"

namespace pteron::optimized {

// out = clamp(conv(input, weight) + bias, lo, hi) (bias may be null; NaN stays NaN): a ReLU is
// lo = 0, hi = +inf; ReLU6 / hardtanh lo = 0 (min_val), hi = 6 (max_val); none -inf, +inf.
void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, float lo, float hi);

}  // namespace pteron::optimized
