// Depthwise NCHW convolution (groups == in_channels, any channel multiplier): each output
// channel reads one input plane, so it runs as a direct loop instead of a per-channel GEMM.
#pragma once

#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/dtype.h"

namespace pteron {

// out = conv(input, weight) + bias (bias may be null). Shapes from `s`; all tensors dense NCHW.
template <typename T>
void depthwise_conv2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out);

}  // namespace pteron
