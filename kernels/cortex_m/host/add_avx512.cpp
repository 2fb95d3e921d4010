// quantized_add's host path (add_host.h): each input's (q - zp) << 20 requantised to the common
// scale, the sum requantised to the output's, offset and clamped, 16 lanes at a time.
#include <immintrin.h>

#include "kernels/cortex_m/host/add_host.h"
#include "kernels/cortex_m/host/requantize_avx512.h"

namespace pteron::cortex_m::host {
namespace {

struct LaneQuant {
  __m512i mult, left, right;
  explicit LaneQuant(int32_t multiplier, int32_t shift)
      : mult(_mm512_set1_epi32(multiplier)),
        left(_mm512_set1_epi32(shift > 0 ? shift : 0)),
        right(_mm512_set1_epi32(shift > 0 ? 0 : -shift)) {}
  __m512i operator()(__m512i v) const { return requantize_avx512(v, mult, left, right); }
};

}  // namespace

void add_avx512(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  const LaneQuant q1(p.mult1, p.shift1), q2(p.mult2, p.shift2), qo(p.out_mult, p.out_shift);
  const __m512i zp1 = _mm512_set1_epi32(p.zp1), zp2 = _mm512_set1_epi32(p.zp2);
  const __m512i out_zp = _mm512_set1_epi32(p.out_zp);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t count = n - i < 16 ? n - i : 16;
    const __mmask16 valid = static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u);
    const __m512i x = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(valid, a + i));
    const __m512i y = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(valid, b + i));
    const __m512i xs = q1(_mm512_slli_epi32(_mm512_sub_epi32(x, zp1), kAddLeftShift));
    const __m512i ys = q2(_mm512_slli_epi32(_mm512_sub_epi32(y, zp2), kAddLeftShift));
    const __m512i r = qo(_mm512_add_epi32(xs, ys));
    store_int8x16(out + i, offset_clamp_to_int8(r, out_zp, lo, hi), count);
  }
}

}  // namespace pteron::cortex_m::host
