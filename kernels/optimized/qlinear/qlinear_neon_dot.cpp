// QLinearKernels for aarch64 with the dot-product extension (compiled with
// -march=armv8.2-a+dotprod, chosen only when the CPU reports asimddp): `sdot` sums four
// nibble x int8 products into each int32 lane for 8da4w. The weight-only paths are the
// portable loops, which the compiler vectorises with NEON.
#include <arm_neon.h>

#include "kernels/optimized/qlinear/qlinear_impl_scalar.h"
#include "kernels/optimized/qlinear/qlinear_rows.h"

namespace pteron::opt::qneondot {
namespace {

template <int R>
void q4a8_t(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs,
            int32_t* dots) {
  const int64_t groups = K / G;
  const uint8x16_t m = vdupq_n_u8(0x0F);
  for (int64_t g = 0; g < groups; ++g) {
    int32x4_t acc[R];
    for (int r = 0; r < R; ++r) acc[r] = vdupq_n_s32(0);
    for (int64_t k = g * G; k < (g + 1) * G; k += 32) {
      const uint8x16_t b = vld1q_u8(w + k / 2);
      const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(b, m));
      const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
      for (int r = 0; r < R; ++r) {
        const int8_t* x = xq + r * xq_rs + k;
        acc[r] = vdotq_s32(acc[r], lo, vld1q_s8(x));
        acc[r] = vdotq_s32(acc[r], hi, vld1q_s8(x + 16));
      }
    }
    for (int r = 0; r < R; ++r) dots[r * groups + g] = vaddvq_s32(acc[r]);
  }
}

void q4a8_rows(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs, int rows,
               int32_t* dots) {
  qrows::with_rows(rows, [&](auto r) { q4a8_t<decltype(r)::value>(w, K, G, xq, xq_rs, dots); });
}

}  // namespace

extern const QLinearKernels kTable = {"neon-dot", qscalar::q8w_rows, qscalar::q4w_rows, q4a8_rows};

}  // namespace pteron::opt::qneondot
