// Transposed float32 NCHW convolution (ConvTranspose1d/2d: U-Net decoders, GAN generators,
// segmentation heads, audio decoders) for the optimized convolution: per image and group, one
// SGEMM makes every input pixel's contribution to each (output channel, tap),
//   col[(co, kh, kw)][pixel] = W^T[(co, kh, kw)][ci] x x[ci][pixel],
// then col2im adds each contribution onto the output pixel it lands on, threaded over output
// channels (each thread owns whole output planes), the bias first and the activation last. Input
// rows go in chunks so that col stays within a bound of scratch. Images of fewer than 1024
// pixels go through one SGEMM for the whole batch (their inputs gathered side by side): an
// SGEMM of a few columns runs far below its rate.
#pragma once

#include "kernels/optimized/util/output_activation.h"
#include "kernels/portable/util/conv.h"
#include "runtime/kernel/constant_cache.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {

// out = activation(conv_transpose(input, weight) + bias); weight is [Cin, Cout / groups, kH, kW]
// (bias may be null). False, having written nothing that matters, when the context has no
// scratch for it (the caller runs the portable kernel).
bool conv_transpose2d_f32(KernelContext& ctx, const ConvShape& s, const float* input,
                          const float* weight, ConstantCache* weight_cache, const float* bias,
                          float* out, const OutputActivation& activation);

}  // namespace pteron::optimized
