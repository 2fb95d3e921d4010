// The DSP-extension paths (Cortex-M4, Cortex-M7) of the int8 convolutions, called by their op
// files when the build has no MVE but the DSP extension (util/path.h: use_dsp()). Each gives
// the scalar reference's bits; scratch sizes are in scratch.h (the *_dsp functions).
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_params.h"

namespace pteron::cortex_m {

// quantized_conv2d_nhwc (groups 1), any kernel size, stride, padding and dilation; `scratch`
// holds quantized_conv2d_scratch_bytes_dsp bytes.
void conv_dsp(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p, void* scratch);

// quantized_depthwise_conv2d_nhwc with depth multiplier 1, any kernel size, stride, padding and
// dilation; `scratch` holds quantized_depthwise_conv2d_scratch_bytes_dsp bytes.
void depthwise_dsp(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                   void* scratch);

}  // namespace pteron::cortex_m
