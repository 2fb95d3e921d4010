// Depthwise float32 NCHW convolution (groups == in_channels == out_channels) for the optimized
// convolution: each (image, channel) plane is independent, so planes are split over threads,
// and each output row is built tap by tap (row += w * shifted input row) so the inner loop is a
// vectorisable multiply-add over the row (a constant stride for 1 and 2, mobilenet's).
#pragma once

#include "kernels/portable/util/conv.h"

namespace pteron::optimized {

// out = conv(input, weight) + bias (bias may be null), then max(out, 0) when `relu`.
void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, bool relu);

}  // namespace pteron::optimized
