// depthwise_host.h's row loop for AVX-512 (F, BW, VL).
#include <immintrin.h>

#include "kernels/cortex_m/host/depthwise_host.h"
#include "kernels/cortex_m/host/requantize_avx512.h"

namespace pteron::cortex_m::host {
namespace {

// 16 int8 values widened to int32; the first `live` only (the rest zero) unless Full.
template <bool Full>
__m512i load16(const int8_t* p, __mmask16 valid) {
  if constexpr (Full)
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(valid, p));
}

template <bool Full>
__m512i load16(const int32_t* p, __mmask16 valid) {
  if constexpr (Full) return _mm512_loadu_si512(p);
  return _mm512_maskz_loadu_epi32(valid, p);
}

// Channels [c0, c0 + 16) of one output pixel whose window starts at (y0, x0).
template <bool Full>
void pixel_block(const DepthwiseRows& d, const ConvParams& p, const int8_t* image, int32_t y0,
                 int32_t x0, int64_t c0, __mmask16 valid, __m512i in_off, int8_t* out,
                 const __m512i& out_off, const __m512i& lo, const __m512i& hi) {
  const int64_t c = p.cout, cp = d.channels;
  const int32_t* w = d.weights + c0;
  const bool interior = y0 >= 0 && y0 + (p.kh - 1) * p.win.dilation[0] < p.h && x0 >= 0 &&
                        x0 + (p.kw - 1) * p.win.dilation[1] < p.w;
  __m512i acc;
  if (interior) {  // every tap inside: the input offset's share is in `base` already
    acc = load16<Full>(d.base + c0, valid);
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int8_t* x =
          image + (static_cast<int64_t>(y0 + ky * p.win.dilation[0]) * p.w + x0) * c + c0;
      for (int32_t kx = 0; kx < p.kw; ++kx, w += cp, x += p.win.dilation[1] * c)
        acc = _mm512_add_epi32(acc,
                               _mm512_mullo_epi32(load16<Full>(x, valid), load16<Full>(w, valid)));
    }
  } else {  // taps outside the input add nothing
    acc = p.bias ? load16<Full>(p.bias + c0, valid) : _mm512_setzero_si512();
    for (int32_t ky = 0; ky < p.kh; ++ky) {
      const int32_t iy = y0 + ky * p.win.dilation[0];
      if (iy < 0 || iy >= p.h) {
        w += p.kw * cp;
        continue;
      }
      for (int32_t kx = 0; kx < p.kw; ++kx, w += cp) {
        const int32_t ix = x0 + kx * p.win.dilation[1];
        if (ix < 0 || ix >= p.w) continue;
        const int8_t* x = image + (static_cast<int64_t>(iy) * p.w + ix) * c + c0;
        const __m512i xv = _mm512_add_epi32(load16<Full>(x, valid), in_off);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(xv, load16<Full>(w, valid)));
      }
    }
  }
  const __m512i q =
      requantize_avx512(acc, load16<Full>(p.mult + c0, valid), load16<Full>(d.left + c0, valid),
                        load16<Full>(d.right + c0, valid));
  store_int8x16(out + c0, offset_clamp_to_int8(q, out_off, lo, hi),
                Full ? 16 : _mm_popcnt_u32(valid));
}

}  // namespace

void depthwise_rows_avx512(const DepthwiseRows& d, int64_t first, int64_t last) {
  const ConvParams p = *d.p;  // a local copy: int8 stores through `out` cannot alias it
  const int64_t c = p.cout;
  const __m512i in_off = _mm512_set1_epi32(p.in_off);
  const __m512i out_off = _mm512_set1_epi32(p.out_off);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  const int64_t full = c / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (c - full)) - 1u);
  for (int64_t row = first; row < last; ++row) {
    const int64_t b = row / p.oh;
    const int32_t y0 = static_cast<int32_t>(row % p.oh) * p.win.stride[0] - p.win.padding[0];
    const int8_t* image = d.in + b * p.h * p.w * c;
    int8_t* out = d.out + row * p.ow * c;
    for (int32_t ox = 0; ox < p.ow; ++ox, out += c) {
      const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
      for (int64_t c0 = 0; c0 < full; c0 += 16)
        pixel_block<true>(d, p, image, y0, x0, c0, 0xFFFF, in_off, out, out_off, lo, hi);
      if (full < c)
        pixel_block<false>(d, p, image, y0, x0, full, tail, in_off, out, out_off, lo, hi);
    }
  }
}

}  // namespace pteron::cortex_m::host
