// The int8 kernels whose host paths are plain vector loops (no packing, no tile): quantize, add,
// max pool, depthwise convolution. Each loop is written once (vector_loops.h) over a vector
// type, and instantiated per instruction set (isa_avx512.cpp: 16 int32 lanes, 64 bytes;
// isa_avx2.cpp: 8 and 32; isa_neon.cpp: 4 and 16), bit for bit the scalar references in the
// op_*.cpp files. Every entry returns false, having written nothing, when this CPU has none of them
// (the caller takes the scalar path).
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/add_params.h"
#include "kernels/cortex_m/util/broadcast_rows.h"
#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/pool_params.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m::host {

// quantize_per_tensor: clamp(round_half_even(x * inv_scale)) + zp, NaN to the zero point.
bool quantize(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp, int32_t qmin,
              int32_t qmax);
// quantized_add: both inputs' (q - zp) << 20 requantised to the common scale, the sum to the
// output's, offset and clamped.
bool add(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p);
// quantized_mul: (a - zp_a) * (b - zp_b) requantised to the output scale, offset and clamped.
bool mul(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p);
// The same with `b` broadcast as rows (util/broadcast_rows.h), rows split over threads.
bool mul_broadcast(const int8_t* a, const int8_t* b, int8_t* out, const BroadcastRows& rows,
                   const MulParams& p);
// quantized_lut: out[i] = table[in[i] + 128] (`table` of 256 entries), split over threads.
bool lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n);
// quantized_avg_pool2d_nhwc: each window's in-bounds mean (util/pool_params.h's rounded_mean),
// output rows by blocks of kAvgPoolChannels channels split over threads.
bool avg_pool(const int8_t* in, int8_t* out, const PoolShape& p);
// quantized_max_pool2d_nhwc: the window's in-bounds maximum, moved by the zero-point shift and
// clamped.
bool max_pool(const int8_t* in, int8_t* out, const MaxPoolParams& p);
// quantized_depthwise_conv2d_nhwc with depth multiplier 1; output rows on the thread pool.
bool depthwise(KernelContext& ctx, const int8_t* in, const int8_t* weight, int8_t* out,
               const ConvParams& p);

// What the depthwise rows need besides the op's own multipliers and biases (p.mult, p.bias):
// the weights widened to int32, [kH * kW][channels] (C rounded up to 16, zeros past C), and
// per channel base = bias + input_offset * sum of the channel's weights (what a pixel whose taps
// all lie inside the input starts from) and the shift's left and right parts.
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

// One instruction set's instantiations of the loops.
struct VectorKernels {
  void (*quantize)(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp,
                   int32_t qmin, int32_t qmax);
  void (*add)(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p);
  void (*mul)(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p);
  void (*max_pool)(const int8_t* in, int8_t* out, const MaxPoolParams& p);
  void (*depthwise_rows)(const DepthwiseRows& d, int64_t first, int64_t last);  // of n * oh
  void (*lut)(const int8_t* in, const int8_t* table, int8_t* out, int64_t n);
  // Output row `row` of n * oh, channels [c0, c0 + count), count <= kAvgPoolChannels.
  void (*avg_pool)(const int8_t* in, int8_t* out, const PoolShape& p, int64_t row, int64_t count,
                   int64_t c0);
};

// The average pool's channels per call: their int32 sums stay in a stack buffer.
constexpr int64_t kAvgPoolChannels = 64;

#if defined(__x86_64__)
extern const VectorKernels kAvx512Kernels;  // isa_avx512.cpp
extern const VectorKernels kAvx2Kernels;    // isa_avx2.cpp
#endif
#if defined(__aarch64__)
extern const VectorKernels kNeonKernels;  // isa_neon.cpp: 4 int32 lanes, 16 bytes
#endif

}  // namespace pteron::cortex_m::host
