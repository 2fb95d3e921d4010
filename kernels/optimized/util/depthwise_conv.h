// Depthwise float32 NCHW convolution (groups == in_channels == out_channels) for the optimized
// convolution: the portable row loop (kernels/portable/util/depthwise_conv.h) over chunks of
// (image, channel) planes split over threads, with an optional ReLU.
#pragma once

#include "kernels/portable/util/conv.h"

namespace pteron::optimized {

// out = conv(input, weight) + bias (bias may be null), then max(out, 0) when `relu`.
void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, bool relu);

}  // namespace pteron::optimized
