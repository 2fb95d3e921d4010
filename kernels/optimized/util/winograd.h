// Winograd F(4x4, 3x3) convolution for float32 NCHW, groups 1, 3x3, stride 1, dilation 1, any
// padding: 36 multiplies per 4x4 output tile and channel pair instead of 144 (4x fewer).
//
// Per image and block of tile rows: the padded input rows are transposed to channel-minor
// (HWC) order in scratch, each 6x6 tile (tiles overlap by 2) becomes V[36][tiles][Cin] = B^T d B
// (simd/winograd_impl.h, vectorised across channels), 36 independent products
// M[e] = V[e] x U[e] (U[36][Cin][Cout] = G g G^T, the transformed weights) run as one batched
// SGEMM, and each tile's A^T M A (+ bias, ReLU) is written channel-minor and transposed into
// the NCHW output, partial tiles clipped. Tile rows per block keep V about 1 MiB (in L2).
#pragma once

#include <cstdint>

#include "kernels/portable/util/conv.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {

// Floats of U for Cin x Cout weights.
inline int64_t winograd_weight_floats(int64_t cin, int64_t cout) { return 36 * cin * cout; }

// U[e][ci][co] from weight[co][ci][3][3] (row-major), e = 6 * i + j of G g G^T.
void winograd_transform_weights(const float* weight, int64_t cin, int64_t cout, float* u);

// Whether `s` has the form the Winograd path computes (3x3, stride 1, dilation 1, groups 1).
bool winograd_supported(const ConvShape& s);

// Whether it is also worth it here: large enough outputs (see winograd.cpp for the measurement).
bool winograd_pays_off(const ConvShape& s);

// The convolution (+ bias, + residual: NCHW of the output's shape, or null; then ReLU if `relu`);
// `u` is the transformed weights, or null to transform `weight` per call (into scratch). False,
// having written nothing, when scratch ran out (the caller takes another path). `out` must not
// alias `input` or `residual`.
bool winograd_conv(KernelContext& ctx, const ConvShape& s, const float* input, const float* weight,
                   const float* u, const float* bias, const float* residual, float* out, bool relu);

}  // namespace pteron::optimized
