// The host paths' vector type for AVX-512 (F, BW, VL): 16 int32 lanes, 64 bytes: what
// vector_loops.h and the convolution tile's epilogue (int8_tile_epilogue.h) are written over. Only
// this ISA's sources include it (they are compiled with its flags).
#pragma once

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32() (`__m512i __Y = __Y;`), which
// its -Wuninitialized reports wherever they inline (GCC bug 105593): silenced for the header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

namespace pteron::cortex_m::host {

inline __mmask16 first16(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u);
}

struct Avx512 {
  static constexpr int64_t kLanes = 16, kByteLanes = 64;
  using I32 = __m512i;
  static __m512i set1(int32_t v) { return _mm512_set1_epi32(v); }
  static __m512 set1f(float v) { return _mm512_set1_ps(v); }
  static __m512i load_i8(const int8_t* p, int64_t count) {
    return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(first16(count), p));
  }
  static __m512i load_i32(const int32_t* p, int64_t count) {
    return _mm512_maskz_loadu_epi32(first16(count), p);
  }
  static __m512 load_f32(const float* p, int64_t count) {
    return _mm512_maskz_loadu_ps(first16(count), p);
  }
  static __m512i add(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
  static __m512i sub(__m512i a, __m512i b) { return _mm512_sub_epi32(a, b); }
  static __m512i mullo(__m512i a, __m512i b) { return _mm512_mullo_epi32(a, b); }
  static __m512i shl(__m512i a, int bits) {
    return _mm512_slli_epi32(a, static_cast<unsigned>(bits));
  }
  // util/requantize.h's requantize(value, multiplier, shift), bit for bit: the left shift, the
  // rounding doubling high multiply in 64-bit lanes (even and odd lanes apart: bits 31..62 of
  // value * multiplier + 2^30 shifted into each lane's own dword), then the rounding right shift
  // with the midpoint away from zero (threshold one higher for negative values, chosen by mask).
  // left = max(shift, 0), right = max(-shift, 0). Vector shifts are the scarce port here (this
  // and its caller's epilogue bound the int8 convolutions): four, where the plain form took
  // seven; the parts depending on mult and right alone are hoisted out of the callers' loops.
  static __m512i requantize(__m512i value, __m512i mult, __m512i left, __m512i right) {
    const __m512i v = _mm512_sllv_epi32(value, left);
    const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
    const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, mult), half), 31);
    const __m512i odd = _mm512_slli_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_shuffle_epi32(v, _MM_PERM_DDBB),
                                          _mm512_shuffle_epi32(mult, _MM_PERM_DDBB)),
                         half),
        1);
    const __m512i high = _mm512_mask_blend_epi32(0xAAAA, even, odd);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
    const __m512i at_half = _mm512_srli_epi32(mask, 1);
    const __mmask16 negative = _mm512_cmplt_epi32_mask(high, _mm512_setzero_si512());
    const __m512i threshold = _mm512_mask_add_epi32(at_half, negative, at_half, one);
    const __m512i q = _mm512_srav_epi32(high, right);
    return _mm512_mask_add_epi32(
        q, _mm512_cmpgt_epi32_mask(_mm512_and_si512(high, mask), threshold), q, one);
  }
  static __m512i quantize_lanes(__m512 x, __m512 scale, __m512 lo, __m512 hi) {
    const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(x, scale),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 ordered = _mm512_cmp_ps_mask(r, r, _CMP_ORD_Q);
    return _mm512_cvtps_epi32(
        _mm512_maskz_mov_ps(ordered, _mm512_min_ps(_mm512_max_ps(r, lo), hi)));
  }
  // All lanes, as int32.
  static void store_i32(int32_t* p, __m512i v) { _mm512_storeu_si512(p, v); }
  // q + offset clamped to [lo, hi] (within int8), the first `count` as bytes: narrowed with
  // saturation to int8 first, then clamped as 16 bytes (half the work of clamping 16 dwords).
  static void store_i8(int8_t* out, __m512i q, __m512i offset, __m512i lo, __m512i hi,
                       int64_t count) {
    __m128i bytes = _mm512_cvtsepi32_epi8(_mm512_add_epi32(q, offset));
    // Narrowed in a register, then stored: the compiler would otherwise fuse the two into
    // vpmovsdb to memory, which Zen 4 runs at a fraction of the register form's rate (the
    // depthwise rows spent about 40% of their time on that one instruction).
    asm("" : "+v"(bytes));
    bytes = _mm_min_epi8(_mm_max_epi8(bytes, _mm512_cvtepi32_epi8(lo)), _mm512_cvtepi32_epi8(hi));
    if (count >= 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
    } else {
      _mm_mask_storeu_epi8(out, first16(count), bytes);
    }
  }
  static __m512i min_bytes() { return _mm512_set1_epi8(-128); }
  static __m512i load_bytes(const int8_t* p, int64_t count) {
    const __mmask64 valid = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
    return _mm512_mask_loadu_epi8(min_bytes(), valid, p);
  }
  static __m512i max_bytes(__m512i a, __m512i b) { return _mm512_max_epi8(a, b); }
  static void spill_bytes(__m512i v, int8_t* out) { _mm512_store_si512(out, v); }
  // out[i] = table[in[i] + 128] over 256 entries with AVX-512 BW alone: each 16-entry slice
  // looked up with the low nibble (vpshufb) and merged where the high nibble names it.
  static void lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n) {
    __m512i slices[16];
    for (int k = 0; k < 16; ++k)
      slices[k] =
          _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80)), nibble = _mm512_set1_epi8(15);
    for (int64_t i = 0; i < n; i += 64) {
      const __mmask64 live = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
      const __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(live, in + i), flip);
      const __m512i lo = _mm512_and_si512(x, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble);
      __m512i r = _mm512_setzero_si512();
      for (int k = 0; k < 16; ++k)
        r = _mm512_mask_shuffle_epi8(
            r, _mm512_cmpeq_epi8_mask(hi, _mm512_set1_epi8(static_cast<char>(k))), slices[k], lo);
      _mm512_mask_storeu_epi8(out + i, live, r);
    }
  }
};

}  // namespace pteron::cortex_m::host
