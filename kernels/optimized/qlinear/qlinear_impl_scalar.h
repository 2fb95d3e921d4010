// Scalar bodies of QLinearKernels (qlinear_kernels.h), shared by qlinear_base.cpp and the
// SIMD files (which use them for what their vectors do not cover). Internal linkage: each file
// compiles its own copy with its own flags, so a copy built for a newer CPU (the aarch64
// dot-product file) never stands in for the baseline table's.
#pragma once

#include <cmath>

#include "kernels/optimized/qlinear/qlinear_kernels.h"

namespace pteron::opt::qscalar {
namespace {

// Weight k of an int4 row (nibble - 8).
inline int q4_at(const uint8_t* w, int64_t k) {
  const uint8_t b = w[(k >> 5) * 16 + (k & 15)];
  return ((k & 16) ? (b >> 4) : (b & 15)) - 8;
}

inline void q8w_rows(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                     int64_t x_rs, int rows, float* out, int64_t out_step) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * x_rs;
    float total = 0.0f;
    for (int64_t g0 = 0; g0 < K; g0 += G) {
      float s = 0.0f;
      for (int64_t k = g0; k < g0 + G; ++k) s += xr[k] * static_cast<float>(w[k]);
      total += scales[g0 / G] * s;
    }
    out[r * out_step] = total;
  }
}

// q4w_rows' arithmetic, the same operations in every table (results are bit-identical
// whichever ran). Weight k is dequantized as float(q) * its group's scale (one rounding, as
// q4w_dequant) and multiplied into one of 64 float lanes with a fused multiply-add: block b (k =
// 32b .. 32b + 31) adds weight 32b + i into lane 32 (b % 2) + i, so that a 16-lane vector holds
// one nibble half of a block and four vectors make independent dependency chains. Then
// q4w_reduce: lanes i, i + 32, i + 16 and i + 48 summed as (i + (i + 32)) + ((i + 16) + (i +
// 48)) into 16, and those halved: 8, 4, 2, 1 (lane j + half added to lane j).
constexpr int kQ4Lanes = 64;

inline float q4w_reduce(const float* lanes) {
  float v[16];
  for (int i = 0; i < 16; ++i) v[i] = (lanes[i] + lanes[i + 32]) + (lanes[i + 16] + lanes[i + 48]);
  for (int half = 8; half >= 1; half /= 2) {
    for (int i = 0; i < half; ++i) v[i] += v[i + half];
  }
  return v[0];
}

inline void q4w_rows(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                     int64_t x_rs, int rows, float* out, int64_t out_step) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * x_rs;
    float lanes[kQ4Lanes] = {};
    for (int64_t k = 0; k < K; ++k) {
      const float wk = static_cast<float>(q4_at(w, k)) * scales[k / G];
      float& lane = lanes[((k >> 5) & 1) * 32 + (k & 31)];
      lane = std::fma(xr[k], wk, lane);
    }
    out[r * out_step] = q4w_reduce(lanes);
  }
}

// The dequantizers loop over whole groups (one scale each) and whole int4 blocks, so the
// compiler vectorises them with each table's own flags.
inline void q8w_dequant(const int8_t* w, const float* scales, int64_t K, int64_t G, int rows,
                        int64_t k0, int64_t kc, float* out, int64_t ld) {
  const int64_t groups = K / G;
  for (int j = 0; j < rows; ++j) {
    const int8_t* wr = w + j * K;
    float* o = out + j * ld - k0;
    for (int64_t k = k0; k < k0 + kc;) {
      const int64_t end = (k / G + 1) * G < k0 + kc ? (k / G + 1) * G : k0 + kc;
      const float s = scales[j * groups + k / G];
      for (; k < end; ++k) o[k] = static_cast<float>(wr[k]) * s;
    }
  }
}

inline void q4w_dequant(const uint8_t* w, const float* scales, int64_t K, int64_t G, int rows,
                        int64_t k0, int64_t kc, float* out, int64_t ld) {
  const int64_t groups = K / G;
  for (int j = 0; j < rows; ++j) {
    const uint8_t* wr = w + j * (K / 2);
    const float* sr = scales + j * groups;
    float* o = out + j * ld - k0;
    int64_t k = k0;
    for (; k < k0 + kc && (k & 31) != 0; ++k) o[k] = static_cast<float>(q4_at(wr, k)) * sr[k / G];
    for (; k + 32 <= k0 + kc; k += 32) {  // a whole block: one scale (G is a multiple of 32)
      const uint8_t* b = wr + k / 2;
      const float s = sr[k / G];
      for (int i = 0; i < 16; ++i) {
        o[k + i] = static_cast<float>((b[i] & 15) - 8) * s;
        o[k + 16 + i] = static_cast<float>((b[i] >> 4) - 8) * s;
      }
    }
    for (; k < k0 + kc; ++k) o[k] = static_cast<float>(q4_at(wr, k)) * sr[k / G];
  }
}

inline void a8_quantize_row(const float* x, int64_t K, int64_t G, float eps, int8_t* xq,
                            float* scale, int32_t* zero, int32_t* xoff) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    lo = x[k] < lo ? x[k] : lo;
    hi = x[k] > hi ? x[k] : hi;
  }
  float s = (hi - lo) / 255.0f;
  s = s < eps ? eps : s;
  float zp = -128.0f - std::nearbyint(lo / s);
  zp = zp < -128.0f ? -128.0f : (zp > 127.0f ? 127.0f : zp);
  const float inv = 1.0f / s;
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    int32_t sum = 0;
    for (int64_t k = g0; k < g0 + G; ++k) {
      float q = std::nearbyint(x[k] * inv) + zp;
      q = q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q);
      xq[k] = static_cast<int8_t>(q);
      sum += xq[k];
    }
    xoff[g0 / G] = 8 * sum;
  }
  *scale = s;
  *zero = static_cast<int32_t>(zp);
}

// Nibble (q + 8) of channel c of an 8da4w panel at weight k (qlinear_kernels.h's layout).
inline int a8w4_nibble(const uint8_t* panel, int c, int64_t k) {
  const uint8_t b = panel[(k >> 3) * 64 + c * 4 + (k & 3)];
  return (k & 4) ? (b >> 4) : (b & 15);
}

template <typename A, typename B>
inline void int8_tile_typed(const A* a, int64_t a_rs, const B* b, int64_t b_rs, int64_t K, int rows,
                            int cols, int32_t* c, int64_t c_rs) {
  if (rows == kInt8Tile && cols == kInt8Tile) {
    // Sixteen named sums (not an array) so that the vectoriser keeps each in a register.
    // Unsigned: wrapping is defined, and |a * b| <= 2^15 fits int32 before it.
    uint32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    uint32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
    const A *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
    const B *b0 = b, *b1 = b + b_rs, *b2 = b + 2 * b_rs, *b3 = b + 3 * b_rs;
    for (int64_t k = 0; k < K; ++k) {
      const int32_t x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
      const int32_t y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
      s00 += static_cast<uint32_t>(x0 * y0), s01 += static_cast<uint32_t>(x0 * y1);
      s02 += static_cast<uint32_t>(x0 * y2), s03 += static_cast<uint32_t>(x0 * y3);
      s10 += static_cast<uint32_t>(x1 * y0), s11 += static_cast<uint32_t>(x1 * y1);
      s12 += static_cast<uint32_t>(x1 * y2), s13 += static_cast<uint32_t>(x1 * y3);
      s20 += static_cast<uint32_t>(x2 * y0), s21 += static_cast<uint32_t>(x2 * y1);
      s22 += static_cast<uint32_t>(x2 * y2), s23 += static_cast<uint32_t>(x2 * y3);
      s30 += static_cast<uint32_t>(x3 * y0), s31 += static_cast<uint32_t>(x3 * y1);
      s32 += static_cast<uint32_t>(x3 * y2), s33 += static_cast<uint32_t>(x3 * y3);
    }
    const uint32_t sums[16] = {s00, s01, s02, s03, s10, s11, s12, s13,
                               s20, s21, s22, s23, s30, s31, s32, s33};
    for (int i = 0; i < kInt8Tile; ++i)
      for (int j = 0; j < kInt8Tile; ++j) c[i * c_rs + j] = static_cast<int32_t>(sums[i * 4 + j]);
    return;
  }
  for (int i = 0; i < rows; ++i) {  // an edge tile: one sum at a time
    for (int j = 0; j < cols; ++j) {
      uint32_t sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += static_cast<uint32_t>(static_cast<int32_t>(a[i * a_rs + k]) *
                                     static_cast<int32_t>(b[j * b_rs + k]));
      c[i * c_rs + j] = static_cast<int32_t>(sum);
    }
  }
}

inline void int8_tile(const void* a, bool a_signed, int64_t a_rs, const void* b, bool b_signed,
                      int64_t b_rs, int64_t K, int rows, int cols, int32_t* c, int64_t c_rs) {
  const auto* au = static_cast<const uint8_t*>(a);
  const auto* as = static_cast<const int8_t*>(a);
  const auto* bu = static_cast<const uint8_t*>(b);
  const auto* bs = static_cast<const int8_t*>(b);
  if (!a_signed && b_signed) return int8_tile_typed(au, a_rs, bs, b_rs, K, rows, cols, c, c_rs);
  if (a_signed && b_signed) return int8_tile_typed(as, a_rs, bs, b_rs, K, rows, cols, c, c_rs);
  if (a_signed) return int8_tile_typed(as, a_rs, bu, b_rs, K, rows, cols, c, c_rs);
  return int8_tile_typed(au, a_rs, bu, b_rs, K, rows, cols, c, c_rs);
}

inline void a8w4_tile(const uint8_t* w, const float* scales, int64_t K, int64_t G, int panels,
                      const int8_t* xq, int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs,
                      int rows, float* acc, int64_t acc_rs) {
  const int64_t groups = K / G;
  for (int p = 0; p < panels; ++p) {
    const uint8_t* wp = w + p * K * 8;
    const float* sp = scales + p * groups * kA8W4Panel;
    for (int r = 0; r < rows; ++r) {
      const int8_t* xr = xq + r * xq_rs;
      for (int c = 0; c < kA8W4Panel; ++c) {
        float sum = 0.0f;
        for (int64_t g = 0; g < groups; ++g) {
          int32_t d = 0;
          for (int64_t k = g * G; k < (g + 1) * G; ++k) d += a8w4_nibble(wp, c, k) * xr[k];
          sum =
              std::fma(sp[g * kA8W4Panel + c], static_cast<float>(d - xoff[r * xoff_rs + g]), sum);
        }
        acc[r * acc_rs + p * kA8W4Panel + c] = sum;
      }
    }
  }
}

}  // namespace
}  // namespace pteron::opt::qscalar
