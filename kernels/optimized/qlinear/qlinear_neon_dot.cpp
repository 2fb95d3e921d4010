// QLinearKernels for aarch64 with the dot-product extension (compiled with
// -march=armv8.2-a+dotprod, chosen only when the CPU reports asimddp): `sdot` by lane sums four
// nibble x int8 products into each int32 lane (one channel per lane) for 8da4w. The
// weight-only paths are the portable loops, which the compiler vectorises with NEON.
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
                                      qscalar::q4w_rows,
                                      qscalar::q8w_dequant,
                                      qscalar::q4w_dequant,
                                      qscalar::a8_quantize_row,
                                      a8w4_tile,
                                      4,
                                      1};

}  // namespace pteron::opt::qneondot
