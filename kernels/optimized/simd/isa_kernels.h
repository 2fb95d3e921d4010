// The optimized kernels' inner loops over raw float arrays, compiled once per instruction set
// (isa_avx512.cpp, isa_avx2.cpp, isa_base.cpp: NEON on aarch64, scalar elsewhere) and chosen
// once at run time by what the CPU supports. The operator files validate arguments, split the
// work over threads and call these on contiguous rows.
#pragma once

#include <cstdint>

#include "kernels/portable/util/depthwise_conv.h"

namespace pteron::opt {

// kAdd computes a + alpha * b (sub: -alpha). kComplexMul multiplies complex64 values stored as
// (real, imaginary) float pairs: n counts complex values, steps count floats (2: contiguous, 0:
// one value broadcast; others element by element).
enum class BinaryOp : int { kAdd, kMul, kDiv, kComplexMul };

// Element-wise math (vec.h's functions; within a few ulp of the C library, sqrt and rsqrt as
// torch computes them, 1 / sqrt; kRound to nearest, ties to even, as torch.round). kLeakyRelu: x >
// 0 ? x : x * p[0]. kElu: x > 0 ? x * p[1] : expm1(x * p[2]) * p[0] (p: alpha * scale, scale,
// input_scale). Reductions over float32: sum (blocks of 1024 elements in float lanes, block totals
// in double), max and min (NaN wins, as torch's amax / amin).
enum class Reduce : int { kSum, kMax, kMin };

enum class UnaryMath : int {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kSin,
  kCos,
  kSqrt,
  kRsqrt,
  kLeakyRelu,
  kElu,
  kErf,
  kFloor,
  kCeil,
  kTrunc,
  kRound
};

// Scaled dot-product attention over one (batch*head) slice: rows [q_begin, q_end) of
//   out = softmax(scale * q k^T + mask) v
// q [Lq, D] row stride q_row; keys either transposed, k_t [D, Lk] with row stride kt_row
// (kt_col = 1), or as rows, k [Lk, D] with row stride kt_col (kt_row = 1: a KV cache read in
// place); v [Lk, Dv] row stride v_row; out [Lq, Dv] row stride out_row. mask: nullptr, or
// element (i, j) at mask[i * mask_row + j * mask_col] (strides 0 where broadcast), float (added)
// or bool (true means masked out, as in masked_fill(mask, -inf)). A slice may hold the query
// rows of several heads sharing one K and V (grouped-query attention): with head_rows > 0,
// row i's mask row is (i / head_rows) * mask_head + (i % head_rows) * mask_row. A block of keys
// masked out for every row is skipped. A row whose keys are all masked gets NaN, as in PyTorch.
struct AttentionSlice {
  const float* q;
  const float* k_t;
  const float* v;
  float* out;
  const void* mask;
  bool mask_is_bool;
  int64_t q_row, kt_row, v_row, out_row, mask_row, mask_col;
  int64_t D, Dv, Lk;
  float scale;
  // A row whose every score is -inf gives zeros (torch's _safe_softmax) instead of NaN.
  bool zero_masked_rows = false;
  int64_t kt_col = 1;
  int64_t head_rows = 0, mask_head = 0;
};

// A linear with few output columns (a regression or classification head over many rows):
// y[m * y_rs + n] = act(bias[n] + sum_k x[m * x_rs + k] w[n * w_rs + k]), n < N. Dot products
// along K, several rows sharing each weight load; nothing packed (the SGEMM packed all of x
// into panels, then filled 16-column tiles for N = 4).
constexpr int64_t kSkinnyMaxN = 16;
struct SkinnyLinearArgs {
  const float* x;
  int64_t x_rs;
  const float* w;
  int64_t w_rs;
  const float* bias;  // N values or null
  float* y;
  int64_t y_rs;
  int64_t K, N;
  bool relu;
};

// Depthwise outputs of one block of kDepthwiseBlock channels stored channel-minor (each pixel's
// kDepthwiseBlock channels contiguous), so every vector lane is a channel and no lane idles
// however narrow the image: y[(oh * out_w + ow) * B + c] = clamp(bias[c] + sum over (kh, kw) of
// w[(kh * kernel_w + kw) * B + c] * tile[((oh * stride_h + kh * dilation_h) * tile_w + ow *
// stride_w + kw * dilation_w) * B + c]), B = kDepthwiseBlock. The tile holds the zero-padded
// input rows the outputs read.
constexpr int64_t kDepthwiseBlock = 16;
struct DepthwiseBlockArgs {
  const float* tile;
  int64_t tile_w;
  const float* w;
  const float* bias;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  float* y;
  int64_t out_h, out_w;
};

struct IsaKernels {
  const char* name;  // "avx512", "avx2", "neon", "scalar"
  // y = (x - mean) * rstd * w + b over rows of D (w, b may be nullptr); mean/rstd per row.
  void (*layer_norm)(const float* x, const float* w, const float* b, float eps, int64_t rows,
                     int64_t D, float* y, float* mean, float* rstd);
  // y = (x * rsqrt(mean(x^2) + eps)) * w over rows of D (w may be nullptr): RMSNorm.
  void (*rms_norm)(const float* x, const float* w, float eps, int64_t rows, int64_t D, float* y);
  void (*gelu)(const float* x, float* y, int64_t n, bool tanh_approx);
  void (*relu)(const float* x, float* y, int64_t n);
  // y = min(max(y, lo), hi) in place; NaN stays NaN.
  void (*clamp)(float* y, int64_t n, float lo, float hi);
  // y = 1 / (1 + e^-x)
  void (*sigmoid)(const float* x, float* y, int64_t n);
  // y = tanh(x) (vtanh: within 6 ulp)
  void (*tanh)(const float* x, float* y, int64_t n);
  // y = (x * sigmoid(x)) * u (SwiGLU's gate times up); u null: y = x * sigmoid(x) (SiLU).
  void (*silu_mul)(const float* x, const float* u, float* y, int64_t n);
  // y = min(max(x + 3, 0), 6) / 6 (hardsigmoid), times x where `swish` (hardswish); NaN stays
  // NaN. y may be x.
  void (*hard_activation)(const float* x, float* y, int64_t n, bool swish);
  // Softmax (or log-softmax) over each contiguous row of n.
  void (*softmax)(const float* x, float* y, int64_t rows, int64_t n, bool log);
  // y[i] = a[i * a_step] op b[i * b_step]: steps of 1 (contiguous) and 0 (broadcast) are
  // vectorised, any other step runs element by element.
  void (*binary)(BinaryOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                 float alpha, float* y, int64_t n);
  void (*attention)(const AttentionSlice& s, int64_t q_begin, int64_t q_end);
  // Winograd F(4x4, 3x3) transforms of one tile over n channels (contiguous in each element).
  // Input: the 6x6 patch d[i][j] at d + i * row + j * col -> v + e * v_stride, e = 0..35
  // (B^T d B, row-major). Output: the 36 products at m + e * m_stride -> the 4x4 output tile
  // A^T m A (+ bias[channel] when bias is not null, then ReLU if asked) at y + i * row + j * col.
  void (*winograd_input)(const float* d, int64_t row, int64_t col, float* v, int64_t v_stride,
                         int64_t n);
  void (*winograd_output)(const float* m, int64_t m_stride, const float* bias, bool relu, float* y,
                          int64_t row, int64_t col, int64_t n);
  // dst[j * dst_rs + i] = src[i * src_rs + j] for i < rows, j < cols.
  void (*transpose)(const float* src, int64_t src_rs, float* dst, int64_t dst_rs, int64_t rows,
                    int64_t cols);
  // Output rows of a depthwise convolution (DepthwiseRowArgs), each tap one fused
  // multiply-add in (kh, kw) order, then clamped to [lo, hi] (NaN stays NaN); lo = -inf and
  // hi = +inf leave it as it is.
  void (*depthwise_row)(const DepthwiseRowArgs& row, float lo, float hi);
  // DepthwiseBlockArgs's outputs, taps in (kh, kw) order as depthwise_row, clamped likewise.
  void (*depthwise_block)(const DepthwiseBlockArgs& block, float lo, float hi);
  // y = op(x) over n elements (UnaryMath; `p` its parameters, may be null for the others).
  void (*unary_math)(UnaryMath op, const float* x, float* y, int64_t n, const float* p);
  // out[o] = op over the row x[o * n .. (o + 1) * n) for o < rows; n >= 1.
  void (*reduce_rows)(Reduce op, const float* x, int64_t rows, int64_t n, float* out);
  // out[j] = op over r < R of x[r * stride + j] for j < n (columns of R rows); R >= 1.
  void (*reduce_columns)(Reduce op, const float* x, int64_t R, int64_t stride, int64_t n,
                         float* out);
  // Rows [m0, m1) of a SkinnyLinearArgs linear (N <= kSkinnyMaxN).
  void (*skinny_linear)(const SkinnyLinearArgs& a, int64_t m0, int64_t m1);
  // The sum of x[i] - center over x[0 .. n) (squares false) or of (x[i] - center)^2 (true), in
  // double: float lanes over blocks of 1024 elements, the block totals added in double (the
  // error grows with the block, not with n), the deviations from a center near the values
  // keeping their digits where the values sit far from zero. The statistics of group and
  // instance norms' planes.
  double (*blocked_sum)(const float* x, int64_t n, float center, bool squares);
  // y = ((x - mean) - mean_low) * scale + shift over n elements (a normalisation with its affine
  // folded into scale and shift): the mean as a pair of floats (mean + mean_low, the double
  // rounded twice) so inputs far from zero keep their digits (x - mean is exact near the mean;
  // x * scale - mean * scale would cancel). y may be x.
  void (*normalize)(const float* x, float* y, int64_t n, float mean, float mean_low, float scale,
                    float shift);
  // The maximum (max) or minimum of each row x[o * n .. (o + 1) * n), o < rows, n >= 1, and the
  // position of its first occurrence; NaN counts as the extreme (its first position), as in
  // torch's max.dim and argmax. values may be null.
  void (*arg_extreme_rows)(bool max, const float* x, int64_t rows, int64_t n, float* values,
                           int64_t* indices);
  // The same down the columns j < n of R rows (x[r * stride + j], R >= 1, R < 2^24).
  void (*arg_extreme_columns)(bool max, const float* x, int64_t R, int64_t stride, int64_t n,
                              float* values, int64_t* indices);
  // y[i] = c[i] != 0 ? a[i * a_step] : b[i * b_step] over n elements (where, masked_fill): c
  // one byte per element (a bool tensor), steps 1 or 0 (one value broadcast).
  void (*select)(const uint8_t* c, const float* a, int64_t a_step, const float* b, int64_t b_step,
                 float* y, int64_t n);
};

// The best table for this CPU (decided once).
const IsaKernels& isa_kernels();
// Every table this CPU can run, best first (tests compare them against each other).
int supported_isa_kernels(const IsaKernels** out, int capacity);

}  // namespace pteron::opt
