// The host paths' vector type for AVX2: 8 int32 lanes, 32 bytes: what vector_loops.h and the
// convolution tile's epilogue (int8_tile_epilogue.h) are written over. Only this ISA's sources
// include it (they are compiled with its flags).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cortex_m/host/requantize_avx2.h"

namespace pteron::cortex_m::host {

struct Avx2 {
  static constexpr int64_t kLanes = 8, kByteLanes = 32;
  using I32 = __m256i;
  static __m256i set1(int32_t v) { return _mm256_set1_epi32(v); }
  static __m256 set1f(float v) { return _mm256_set1_ps(v); }
  static __m256i load_i8(const int8_t* p, int64_t count) { return load_int8x8(p, count); }
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
  static __m256i requantize(__m256i v, __m256i mult, __m256i left, __m256i right) {
    return requantize_avx2(v, mult, left, right);
  }
  static __m256i quantize_lanes(__m256 x, __m256 scale, __m256 lo, __m256 hi) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(x, scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // min/max return their second operand for NaN: clamp first, then NaN lanes to 0.
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    return _mm256_cvtps_epi32(_mm256_and_ps(clamped, _mm256_cmp_ps(r, r, _CMP_ORD_Q)));
  }
  static void store_i8(int8_t* out, __m256i q, __m256i offset, __m256i lo, __m256i hi,
                       int64_t count) {
    store_int8x8(out, offset_clamp_to_int8(q, offset, lo, hi), count);
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
};

}  // namespace pteron::cortex_m::host
