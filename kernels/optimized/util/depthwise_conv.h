// Depthwise float32 NCHW convolution (groups == in_channels == out_channels) for the optimized
// convolution, the activation that follows it applied in the same pass. Narrow outputs run in
// channel-minor blocks (IsaKernels::depthwise_block: every lane a channel, so a 7-wide row does
// not leave most of a vector idle); wide ones run the portable kernel's padded-row walk
// (kernels/portable/util/depthwise_conv.h) with this CPU's SIMD row loop
// (IsaKernels::depthwise_row). Both split their work over threads.
#pragma once

#include "kernels/optimized/util/output_activation.h"
#include "kernels/portable/util/conv.h"

namespace pteron::optimized {

// out = activation(conv(input, weight) + bias) (bias may be null; NaN stays NaN).
void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, const OutputActivation& activation);

}  // namespace pteron::optimized
