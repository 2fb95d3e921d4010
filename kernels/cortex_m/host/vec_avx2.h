// The host paths' vector type for AVX2: 8 int32 lanes, 32 bytes: what vector_loops.h and the
// convolution tile's epilogue (int8_tile_epilogue.h) are written over. Only this ISA's sources
// include it (they are compiled with its flags).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace pteron::cortex_m::host {

struct Avx2 {
  static constexpr int64_t kLanes = 8, kByteLanes = 32;
  using I32 = __m256i;
  static __m256i set1(int32_t v) { return _mm256_set1_epi32(v); }
  static __m256 set1f(float v) { return _mm256_set1_ps(v); }
  static __m256i load_i8(const int8_t* p, int64_t count) {
    int64_t bytes = 0;
    if (count >= 8) {
      std::memcpy(&bytes, p, 8);
    } else {
      std::memcpy(&bytes, p, static_cast<size_t>(count));
    }
    return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
  }
  static __m256i load_i32(const int32_t* p, int64_t count) {
    if (count >= 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    alignas(32) int32_t lanes[8] = {};
    std::memcpy(lanes, p, static_cast<size_t>(count) * sizeof(int32_t));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
  static __m256 load_f32(const float* p, int64_t count) {
    if (count >= 8) return _mm256_loadu_ps(p);
    alignas(32) float lanes[8] = {};
    std::memcpy(lanes, p, static_cast<size_t>(count) * sizeof(float));
    return _mm256_load_ps(lanes);
  }
  static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
  static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi32(a, b); }
  static __m256i mullo(__m256i a, __m256i b) { return _mm256_mullo_epi32(a, b); }
  static __m256i shl(__m256i a, int bits) { return _mm256_slli_epi32(a, bits); }
  // util/requantize.h's requantize(value, multiplier, shift), bit for bit, as Avx512's (AVX2 has
  // no 64-bit arithmetic shift; a logical one gives the same low 32 bits).
  static __m256i requantize(__m256i value, __m256i mult, __m256i left, __m256i right) {
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
    const __m256i threshold =
        _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_srai_epi32(q, 31));
    return _mm256_sub_epi32(q, _mm256_cmpgt_epi32(remainder, threshold));  // + 1 where greater
  }
  static __m256i quantize_lanes(__m256 x, __m256 scale, __m256 lo, __m256 hi) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(x, scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // min/max return their second operand for NaN: clamp first, then NaN lanes to 0.
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    return _mm256_cvtps_epi32(_mm256_and_ps(clamped, _mm256_cmp_ps(r, r, _CMP_ORD_Q)));
  }
  // All lanes, as int32.
  static void store_i32(int32_t* p, __m256i v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  // q + offset clamped to [lo, hi] (within int8), the first `count` as bytes.
  static void store_i8(int8_t* out, __m256i q, __m256i offset, __m256i lo, __m256i hi,
                       int64_t count) {
    const __m256i c = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, offset), lo), hi);
    const __m128i words =
        _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
    const __m128i v = _mm_packs_epi16(words, words);
    if (count >= 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), v);
    } else if (count > 0) {
      int8_t bytes[16];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), v);
      std::memcpy(out, bytes, static_cast<size_t>(count));
    }
  }
  static __m256i min_bytes() { return _mm256_set1_epi8(-128); }
  static __m256i load_bytes(const int8_t* p, int64_t count) {
    if (count >= 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    alignas(32) int8_t lanes[32];
    std::memset(lanes, -128, sizeof lanes);
    std::memcpy(lanes, p, static_cast<size_t>(count));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
  static __m256i max_bytes(__m256i a, __m256i b) { return _mm256_max_epi8(a, b); }
  static void spill_bytes(__m256i v, int8_t* out) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out), v);
  }
  // out[i] = table[in[i] + 128] over 256 entries: pshufb looks up 16 at a time, so each
  // 16-entry slice is looked up with the low nibble and kept where the high nibble names it.
  static void lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n) {
    __m256i slices[16];
    for (int k = 0; k < 16; ++k)
      slices[k] = _mm256_broadcastsi128_si256(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), nibble = _mm256_set1_epi8(15);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      const __m256i x =  // the unsigned index, in + 128
          _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)), flip);
      const __m256i lo = _mm256_and_si256(x, nibble);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
      __m256i r = _mm256_setzero_si256();
      for (int k = 0; k < 16; ++k)
        r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(slices[k], lo),
                               _mm256_cmpeq_epi8(hi, _mm256_set1_epi8(static_cast<char>(k))));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), r);
    }
    for (; i < n; ++i) out[i] = table[in[i] + 128];
  }
};

}  // namespace pteron::cortex_m::host
