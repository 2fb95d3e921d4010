// The max pool's host path (pool_host.h): per output pixel, the window's in-bounds pixels
// maxed 64 channels at a time (padding never wins), then moved by the zero-point shift and
// clamped in 32-bit lanes, as the scalar reference does.
#include <immintrin.h>

#include "kernels/cortex_m/host/pool_host.h"
#include "kernels/cortex_m/host/requantize_avx512.h"

namespace pteron::cortex_m::host {

void max_pool_avx512(const int8_t* in, int8_t* out, const MaxPoolParams& params) {
  const MaxPoolParams p = params;  // a local copy: int8 stores through `out` cannot alias it
  const __m512i shift = _mm512_set1_epi32(p.zp_shift);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  const int64_t c = p.c;
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox, out += c) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int64_t c0 = 0; c0 < c; c0 += 64) {
          const int64_t live = c - c0 < 64 ? c - c0 : 64;
          const __mmask64 valid = live == 64 ? ~__mmask64{0} : (__mmask64{1} << live) - 1;
          __m512i m = _mm512_set1_epi8(-128);
          for (int32_t ky = 0; ky < p.win.kernel[0]; ++ky) {
            const int32_t y = y0 + ky * p.win.dilation[0];
            if (y < 0 || y >= p.h) continue;
            for (int32_t kx = 0; kx < p.win.kernel[1]; ++kx) {
              const int32_t x = x0 + kx * p.win.dilation[1];
              if (x < 0 || x >= p.w) continue;
              const int8_t* src = in + (static_cast<int64_t>(y) * p.w + x) * c + c0;
              m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(valid, src));
            }
          }
          for (int64_t q = 0; q < live; q += 16) {
            const __m512i wide = _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(m, 0));
            store_int8x16(out + c0 + q, offset_clamp_to_int8(wide, shift, lo, hi), live - q);
            m = _mm512_alignr_epi32(m, m, 4);  // the next 16 bytes to the bottom
          }
        }
      }
}

}  // namespace pteron::cortex_m::host
