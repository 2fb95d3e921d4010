// QLinearKernels for aarch64 with the dot-product extension (compiled with
// -march=armv8.2-a+dotprod, chosen only when the CPU reports asimddp): `sdot` by lane sums four
// nibble x int8 products into each int32 lane (one channel per lane) for 8da4w; int4
// weight-only decode in NEON float lanes (the reference's order); int8 weight-only is the
// portable loop, which the compiler vectorises with NEON.
#include <arm_neon.h>

#include "kernels/optimized/qlinear/qlinear_impl_scalar.h"
#include "kernels/optimized/qlinear/qlinear_rows.h"

namespace pteron::opt::qneondot {
namespace {

// R rows x NQ quarter panels (4 channels, one vector each; unit u is quarter u % 4 of panel
// u / 4). The eight activations of a k-block are one 8-byte vector: lane 0 (k = 8b..8b+3)
// multiplies the low nibbles, lane 1 the high ones.
template <int R, int NQ>
void a8w4_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const int8_t* xq,
            int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, float* acc, int64_t acc_rs) {
  const int64_t groups = K / G, panel_bytes = K * 8, panel_scales = groups * kA8W4Panel;
  const uint8x16_t m = vdupq_n_u8(0x0F);
  const uint8_t* wu[NQ];
  const float* su[NQ];
  for (int u = 0; u < NQ; ++u) {
    wu[u] = w + (u / 4) * panel_bytes + (u % 4) * 16;
    su[u] = scales + (u / 4) * panel_scales + (u % 4) * 4;
  }
  float32x4_t f[R][NQ];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NQ; ++u) f[r][u] = vdupq_n_f32(0.0f);
  for (int64_t g = 0; g < groups; ++g) {
    int32x4_t d[R][NQ];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < NQ; ++u) d[r][u] = vdupq_n_s32(0);
    for (int64_t k = g * G; k < (g + 1) * G; k += 8) {
      int8x8_t x[R];
      for (int r = 0; r < R; ++r) x[r] = vld1_s8(xq + r * xq_rs + k);
      for (int u = 0; u < NQ; ++u) {
        const uint8x16_t v = vld1q_u8(wu[u] + k * 8);
        const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, m));
        const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
        for (int r = 0; r < R; ++r) {
          d[r][u] = vdotq_lane_s32(d[r][u], lo, x[r], 0);
          d[r][u] = vdotq_lane_s32(d[r][u], hi, x[r], 1);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const int32x4_t off = vdupq_n_s32(xoff[r * xoff_rs + g]);
      for (int u = 0; u < NQ; ++u) {
        const float32x4_t s = vld1q_f32(su[u] + g * kA8W4Panel);
        f[r][u] = vfmaq_f32(f[r][u], s, vcvtq_f32_s32(vsubq_s32(d[r][u], off)));
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NQ; ++u) vst1q_f32(acc + r * acc_rs + u * 4, f[r][u]);
}

// qscalar::q4w_rows' lanes and order (qlinear_impl_scalar.h) for one row: each 16-lane vector
// of the reference is four 4-lane ones here, so the 64 lanes are sixteen accumulators; a weight
// is float(q) * scale, as there, then one FMA.
void q4w_row(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
             float* out) {
  const uint8x16_t m = vdupq_n_u8(0x0F);
  const int8x16_t eight = vdupq_n_s8(8);
  float32x4_t acc[16];  // lanes 0-3, 4-7, ..., 60-63
  for (float32x4_t& a : acc) a = vdupq_n_f32(0.0f);
  float s = 0.0f;
  const float* group_scale = scales;  // the next group's (no division in the loop)
  int64_t next_group = 0;
  // Block k into accumulators j .. j + 7 (lanes 32 (b % 2) + 0..31).
  const auto block = [&](int64_t k, int j) {
    if (k == next_group) {
      s = *group_scale++;
      next_group += G;
    }
    const uint8x16_t b = vld1q_u8(w + k / 2);
    const int8x16_t half[2] = {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(b, m)), eight),
                               vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(b, 4)), eight)};
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int16x8_t q16[2] = {vmovl_s8(vget_low_s8(half[h])), vmovl_high_s8(half[h])};
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const int32x4_t q32 =
            i % 2 == 0 ? vmovl_s16(vget_low_s16(q16[i / 2])) : vmovl_high_s16(q16[i / 2]);
        const float32x4_t wq = vmulq_n_f32(vcvtq_f32_s32(q32), s);
        const int a = j + 4 * h + i;
        acc[a] = vfmaq_f32(acc[a], vld1q_f32(x + k + 16 * h + 4 * i), wq);
      }
    }
  };
  int64_t k = 0;
  for (; k + 64 <= K; k += 64) {
    block(k, 0);
    block(k + 32, 8);
  }
  if (k < K) block(k, 0);
  // 16 lanes: (i + (i + 32)) + ((i + 16) + (i + 48)), four at a time; then 8, 4, 2, 1.
  float32x4_t v[4];
  for (int t = 0; t < 4; ++t)
    v[t] = vaddq_f32(vaddq_f32(acc[t], acc[8 + t]), vaddq_f32(acc[4 + t], acc[12 + t]));
  const float32x4_t v4 = vaddq_f32(vaddq_f32(v[0], v[2]), vaddq_f32(v[1], v[3]));
  const float32x2_t v2 = vadd_f32(vget_low_f32(v4), vget_high_f32(v4));
  *out = vget_lane_f32(v2, 0) + vget_lane_f32(v2, 1);
}

void q4w_rows(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
              int64_t x_rs, int rows, float* out, int64_t out_step) {
  for (int r = 0; r < rows; ++r) q4w_row(w, scales, K, G, x + r * x_rs, out + r * out_step);
}

// Decode (one row): a panel (four quarters) per pass. Prefill: up to four rows per half panel.
void a8w4_tile(const uint8_t* w, const float* scales, int64_t K, int64_t G, int panels,
               const int8_t* xq, int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, int rows,
               float* acc, int64_t acc_rs) {
  const int64_t panel_bytes = K * 8, panel_scales = K / G * kA8W4Panel;
  for (int p = 0; p < panels; ++p) {
    const uint8_t* wp = w + p * panel_bytes;
    const float* sp = scales + p * panel_scales;
    float* ap = acc + p * kA8W4Panel;
    if (rows == 1) {
      a8w4_t<1, 4>(wp, sp, K, G, xq, xq_rs, xoff, xoff_rs, ap, acc_rs);
      continue;
    }
    for (int h = 0; h < 2; ++h) {
      for (int r0 = 0; r0 < rows; r0 += 4) {
        qrows::with_rows(rows - r0 < 4 ? rows - r0 : 4, [&](auto r) {
          a8w4_t<decltype(r)::value, 2>(wp + h * 32, sp + h * 8, K, G, xq + r0 * xq_rs, xq_rs,
                                        xoff + r0 * xoff_rs, xoff_rs, ap + h * 8 + r0 * acc_rs,
                                        acc_rs);
        });
      }
    }
  }
}

}  // namespace

extern const QLinearKernels kTable = {"neon-dot",
                                      qscalar::q8w_rows,
                                      q4w_rows,
                                      qscalar::q8w_dequant,
                                      qscalar::q4w_dequant,
                                      qscalar::a8_quantize_row,
                                      a8w4_tile,
                                      4,
                                      1,
                                      qscalar::int8_tile};

}  // namespace pteron::opt::qneondot
