// The quantized linears' products on raw rows, shared by the ops that hold one weight
// (pteron::linear_q8w / q4w / 8da4w / 8da8w, op_linear_quantized.cpp) and those that
// hold one weight per expert (pteron::grouped_mm_q*, op_grouped_mm_quantized.cpp, which run
// each expert's rows through these). Weight layouts: qlinear_kernels.h. The callers check
// shapes; these trust them.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {

// y [M, N] = x [M, K] times the weight-only matrix (int8 rows of K bytes, or int4 rows of K / 2
// bytes) + bias (or none), scales [N, K / G]. Prefill (8+ rows) runs on the SGEMM over weights
// dequantized into its panels, fewer rows on the row kernels; threaded either way.
struct WeightOnlyProblem {
  int64_t M, K, N, G;
  const float* x;
  const void* w;
  const float* scales;
  const float* bias;
  float* y;
};
void run_weight_only(KernelContext& ctx, const WeightOnlyProblem& p, bool int4);

// 8da4w's activations: per row its int8 values, scale, zero point and per-group offsets
// (QLinearKernels::a8_quantize_row). Row r's values start at xq + r * K, its offsets at
// xoff + r * (K / G).
struct A8Activations {
  int8_t* xq;
  float* scale;
  int32_t* zero;
  int32_t* xoff;
  // The same activations from row `r` on (an expert's rows inside a grouped product).
  A8Activations from_row(int64_t r, int64_t K, int64_t G) const {
    return {xq + r * K, scale + r, zero + r, xoff + r * (K / G)};
  }
};

// Quantizes rows x [M, K] into scratch of `ctx`; OutOfMemory (reported for `op`) without it.
Error quantize_activations(KernelContext& ctx, const char* op, const float* x, int64_t M, int64_t K,
                           int64_t G, float eps, A8Activations* out);

// y [M, N] = the quantized rows `a` times 8da4w's int4 panels w [P, K / 8, 64] with scales
// [P, K / G, 16] and weight_sums [N] (sum_k q_k * its scale: the zero-point correction), +
// bias (or none).
struct A8W4Problem {
  int64_t M, K, N, G;
  const uint8_t* w;
  const float* scales;
  const float* weight_sums;
  const float* bias;
  float* y;
};
void run_8da4w(const A8W4Problem& p, const A8Activations& a);

// 8da8w (int8 weights, the weight-only problem's): p.x's rows quantized as 8da4w's are, then
// dequantized (scale * (q - zero), as torchao's dequantize_affine) into scratch and multiplied
// by the weights on the weight-only int8 path. torchao's eager model computes exactly this
// float product; the integer dot products of 8da4w's tiles have no int8-weight form yet.
Error run_8da8w(KernelContext& ctx, const char* op, WeightOnlyProblem p, float eps);

// The weights' layout checks, for `lead` leading dims (0: one matrix, 1: one per expert) in
// front of each matrix: the weight-only weight [.., N, K] int8 or [.., N, K / 2] uint8 (int4)
// with scales [.., N, K / G]; 8da4w's panels [.., P, K / 8, 64] uint8 with scales
// [.., P, K / G, 16], P = ceil(N / 16). Each fails with one line for `op`.
Error check_weight_only_layout(const char* op, bool int4, int64_t K, int64_t G, int64_t N,
                               const Tensor& weight, const Tensor& scales, int lead);
Error check_8da4w_layout(const char* op, int64_t K, int64_t G, int64_t N, const Tensor& weight,
                         const Tensor& scales, int lead);

}  // namespace pteron::opt
