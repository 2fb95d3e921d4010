// util/requantize.h's requantize(value, multiplier, shift) on 16 int32 lanes, bit for bit the
// scalar's: the left shift, the rounding doubling high multiply in 64-bit lanes (even and odd
// lanes apart), then the rounding right shift with the midpoint away from zero. For the host
// paths' AVX-512 sources only (compiled with -mavx512f -mavx512bw -mavx512vl).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace pteron::cortex_m::host {

// `left` and `right` are the shift's parts: left = max(shift, 0), right = max(-shift, 0).
inline __m512i requantize_avx512(__m512i value, __m512i mult, __m512i left, __m512i right) {
  const __m512i v = _mm512_sllv_epi32(value, left);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i even = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, mult), half), 31);
  const __m512i odd = _mm512_srai_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(v, 32), _mm512_srli_epi64(mult, 32)),
                       half),
      31);
  const __m512i high = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
  const __m512i remainder = _mm512_and_si512(high, mask);
  const __m512i q = _mm512_srav_epi32(high, right);
  const __m512i threshold = _mm512_sub_epi32(_mm512_srli_epi32(mask, 1), _mm512_srai_epi32(q, 31));
  return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(remainder, threshold), q, one);
}

// + offset, clamped to [lo, hi] (within int8), as 16 bytes.
inline __m128i offset_clamp_to_int8(__m512i q, __m512i offset, __m512i lo, __m512i hi) {
  return _mm512_cvtepi32_epi8(
      _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q, offset), lo), hi));
}

// The first `count` of 16 bytes to `out`.
inline void store_int8x16(int8_t* out, __m128i v, int64_t count) {
  if (count >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
  } else if (count > 0) {
    _mm_mask_storeu_epi8(out, static_cast<__mmask16>((1u << count) - 1u), v);
  }
}

}  // namespace pteron::cortex_m::host
