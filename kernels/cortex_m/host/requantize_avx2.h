// util/requantize.h's requantize(value, multiplier, shift) on 8 int32 lanes, bit for bit the
// scalar's (as requantize_avx512.h; AVX2 has no 64-bit arithmetic shift, and a logical one
// gives the same low 32 bits). For the host paths' AVX2 sources only (compiled with -mavx2).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace pteron::cortex_m::host {

// `left` and `right` are the shift's parts: left = max(shift, 0), right = max(-shift, 0).
inline __m256i requantize_avx2(__m256i value, __m256i mult, __m256i left, __m256i right) {
  const __m256i v = _mm256_sllv_epi32(value, left);
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(v, mult), half), 31);
  const __m256i odd = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(v, 32), _mm256_srli_epi64(mult, 32)),
                       half),
      31);
  const __m256i high = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
  const __m256i remainder = _mm256_and_si256(high, mask);
  const __m256i q = _mm256_srav_epi32(high, right);
  const __m256i threshold = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_srai_epi32(q, 31));
  return _mm256_sub_epi32(q, _mm256_cmpgt_epi32(remainder, threshold));  // + 1 where greater
}

// + offset, clamped to [lo, hi] (within int8); the 8 bytes in the low half of the result.
inline __m128i offset_clamp_to_int8(__m256i q, __m256i offset, __m256i lo, __m256i hi) {
  const __m256i c = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, offset), lo), hi);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
  return _mm_packs_epi16(words, words);
}

// The first `count` of 8 bytes to `out`.
inline void store_int8x8(int8_t* out, __m128i v, int64_t count) {
  if (count >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), v);
  } else if (count > 0) {
    int8_t bytes[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), v);
    std::memcpy(out, bytes, static_cast<size_t>(count));
  }
}

// The first `count` (<= 8) int8 values at `p` widened to int32, the rest zero.
inline __m256i load_int8x8(const int8_t* p, int64_t count) {
  int64_t bytes = 0;
  if (count >= 8) {
    std::memcpy(&bytes, p, 8);
  } else {
    std::memcpy(&bytes, p, static_cast<size_t>(count));
  }
  return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
}

}  // namespace pteron::cortex_m::host
