// Depthwise NCHW convolution (groups == in_channels, any channel multiplier): each output
// channel reads one input plane, so it runs as a direct loop instead of a per-channel GEMM.
#pragma once

#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/dtype.h"

namespace pteron {

// out = conv(input, weight) + bias (bias may be null). Shapes from `s`; all tensors dense NCHW.
template <typename T>
void depthwise_conv2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out);

// Output rows of a depthwise convolution over zero-padded input rows: output row r < count,
// y[r * n + i] for i < n, is bias + sum over (kh, kw) of
// w[kh * kernel_w + kw] * rows[r * in_step + kh * row_step + off[kw] + i]. The padding and the
// stride are already in the rows (split by stride phase), so no tap needs a bounds check; a row
// function may read up to kDepthwiseRowSlack floats past the last tap (they exist and hold zeros
// or other rows' values) but writes only the count * n outputs.
struct DepthwiseRowArgs {
  const float* rows;
  int64_t row_step;
  const int64_t* off;
  int64_t kernel_h, kernel_w;
  const float* w;
  float bias;
  float* y;
  int64_t n;
  int64_t count = 1;
  int64_t in_step = 0;
};
using DepthwiseRowFn = void (*)(const DepthwiseRowArgs& row, const void* context);
constexpr int64_t kDepthwiseRowSlack = 16;

// depthwise_conv2d (float) with the caller's row loop (the optimized library's SIMD rows): the
// same padded-row walk, one call of `row` per block of output rows filled at once. Returns false,
// doing nothing, for the geometries the walk does not take (a kernel of over 64 taps, an input row
// too wide for its buffer): depthwise_conv2d's direct loop runs those.
bool depthwise_conv2d_rows(const ConvShape& s, const float* input, const float* weight,
                           const float* bias, float* out, DepthwiseRowFn row, const void* context);

}  // namespace pteron
