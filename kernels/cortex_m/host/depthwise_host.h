// The int8 depthwise convolution (quantized_depthwise_conv2d_nhwc, depth multiplier 1) on hosted
// CPUs: bit for bit the scalar reference (op_quantized_depthwise_conv2d.cpp), 16 channels a
// vector (AVX-512: the input's bytes widened to int32, the input offset added, multiplied by
// the tap's weights and summed over the taps inside the input, then requantised per channel),
// output rows split over the shared thread pool.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_params.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m::host {

// False, having written nothing, when this CPU has no host path, the depth multiplier is not 1
// or the context has no scratch (the caller takes the scalar path).
bool depthwise(KernelContext& ctx, const int8_t* in, const int8_t* weight, int8_t* out,
               const ConvParams& p);

// What one call of the ISA's row loop needs, besides the op's own multipliers and biases
// (p.mult, p.bias): the weights widened to int32, [kH * kW][channels] (C rounded up to 16,
// zeros past C), and per channel base = bias + input_offset * sum of the channel's weights
// (what a pixel whose taps all lie inside the input starts from) and the shift's left and
// right parts.
struct DepthwiseRows {
  const int8_t* in;
  int8_t* out;
  const ConvParams* p;
  const int32_t* weights;
  int64_t channels;
  const int32_t* base;
  const int32_t* left;
  const int32_t* right;
};

#if defined(__x86_64__)
// Output rows [first, last) of the batch's n * oh rows.
void depthwise_rows_avx512(const DepthwiseRows& d, int64_t first, int64_t last);
#endif

}  // namespace pteron::cortex_m::host
