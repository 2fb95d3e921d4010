// One SIMD vector of floats for the instruction set this translation unit is compiled for:
// AVX-512F (16 lanes), AVX2+FMA (8), NEON (4) or plain scalar (1). Included only by the
// isa_*.cpp files, each inside its own namespace (PTERON_ISA), so the differently compiled
// inline functions never meet at link time. No standard-library templates here for the same
// reason: an inline std:: function compiled with -mavx2 could be picked for a plain caller.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#define PTERON_VEC_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define PTERON_VEC_AVX2 1
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define PTERON_VEC_NEON 1
#else
#define PTERON_VEC_SCALAR 1
#endif

#ifndef PTERON_ISA
#error "define PTERON_ISA (the namespace of this instruction set) before including vec.h"
#endif

namespace pteron::opt::PTERON_ISA {

#define PTERON_VI inline __attribute__((always_inline))

#if PTERON_VEC_AVX512
struct Vec {
  __m512 v;
  static constexpr int kLanes = 16;
};
PTERON_VI Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
PTERON_VI void store(float* p, Vec a) { _mm512_storeu_ps(p, a.v); }
PTERON_VI Vec set1(float x) { return {_mm512_set1_ps(x)}; }
PTERON_VI Vec operator+(Vec a, Vec b) { return {_mm512_add_ps(a.v, b.v)}; }
PTERON_VI Vec operator-(Vec a, Vec b) { return {_mm512_sub_ps(a.v, b.v)}; }
PTERON_VI Vec operator*(Vec a, Vec b) { return {_mm512_mul_ps(a.v, b.v)}; }
PTERON_VI Vec operator/(Vec a, Vec b) { return {_mm512_div_ps(a.v, b.v)}; }
// 1 / a from the 14-bit estimate and one Newton step (a few ulp; cheaper than a divide).
PTERON_VI Vec recip(Vec a) {
  const __m512 r = _mm512_rcp14_ps(a.v);
  return {_mm512_fmadd_ps(r, _mm512_fnmadd_ps(a.v, r, _mm512_set1_ps(1.0f)), r)};
}
PTERON_VI Vec fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
PTERON_VI Vec vmax(Vec a, Vec b) { return {_mm512_max_ps(a.v, b.v)}; }
PTERON_VI Vec vmin(Vec a, Vec b) { return {_mm512_min_ps(a.v, b.v)}; }
PTERON_VI Vec vabs(Vec a) { return {_mm512_abs_ps(a.v)}; }
PTERON_VI Vec copysign(Vec mag, Vec sign) {
  const __m512i s = _mm512_set1_epi32(INT32_MIN);
  return {_mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      s, _mm512_castps_si512(sign.v), _mm512_castps_si512(mag.v), 0xCA))};  // s ? sign : mag
}
PTERON_VI float reduce_add(Vec a) { return _mm512_reduce_add_ps(a.v); }
PTERON_VI float reduce_max(Vec a) { return _mm512_reduce_max_ps(a.v); }
// 2^n for integer-valued n in [-126, 127].
PTERON_VI Vec pow2(Vec n) {
  const __m512i i = _mm512_add_epi32(_mm512_cvtps_epi32(n.v), _mm512_set1_epi32(127));
  return {_mm512_castsi512_ps(_mm512_slli_epi32(i, 23))};
}
PTERON_VI Vec round_nearest(Vec a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT)};
}
PTERON_VI Vec vfloor(Vec a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEG_INF)}; }
PTERON_VI Vec vceil(Vec a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_POS_INF)}; }
PTERON_VI Vec vtrunc(Vec a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_ZERO)}; }
PTERON_VI Vec vsqrt(Vec a) { return {_mm512_sqrt_ps(a.v)}; }
// For a positive normal x: m in [0.5, 1) and e with x = m * 2^e (frexp's split).
PTERON_VI Vec split_exponent(Vec x, Vec* e) {
  const __m512i bits = _mm512_castps_si512(x.v);
  e->v = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126)));
  const __m512i m = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)),
                                    _mm512_set1_epi32(0x3f000000));
  return {_mm512_castsi512_ps(m)};
}
PTERON_VI Vec select_gt(Vec a, Vec b, Vec if_gt, Vec otherwise) {  // a > b ? if_gt : otherwise
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ), otherwise.v, if_gt.v)};
}
PTERON_VI Vec select_lt(Vec a, Vec b, Vec if_lt, Vec otherwise) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), otherwise.v, if_lt.v)};
}
PTERON_VI Vec select_nan(Vec a, Vec if_nan, Vec otherwise) {
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), otherwise.v, if_nan.v)};
}
// c[lane] != 0 ? if_set : otherwise, c one byte per lane (a bool tensor's elements).
PTERON_VI Vec select_bytes(const uint8_t* c, Vec if_set, Vec otherwise) {
  const __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c)));
  return {_mm512_mask_blend_ps(_mm512_test_epi32_mask(w, w), otherwise.v, if_set.v)};
}
// Lane pairs as complex values (real, imaginary): a * b, and one value in every pair.
PTERON_VI Vec complex_mul(Vec a, Vec b) {
  const __m512 swapped = _mm512_permute_ps(a.v, 0xB1);  // (im, re)
  return {_mm512_fmaddsub_ps(a.v, _mm512_moveldup_ps(b.v),
                             _mm512_mul_ps(swapped, _mm512_movehdup_ps(b.v)))};
}
PTERON_VI Vec complex_set1(const float* p) {
  double pair;
  __builtin_memcpy(&pair, p, 8);
  return {_mm512_castpd_ps(_mm512_set1_pd(pair))};
}

#elif PTERON_VEC_AVX2
struct Vec {
  __m256 v;
  static constexpr int kLanes = 8;
};
PTERON_VI Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
PTERON_VI void store(float* p, Vec a) { _mm256_storeu_ps(p, a.v); }
PTERON_VI Vec set1(float x) { return {_mm256_set1_ps(x)}; }
PTERON_VI Vec operator+(Vec a, Vec b) { return {_mm256_add_ps(a.v, b.v)}; }
PTERON_VI Vec operator-(Vec a, Vec b) { return {_mm256_sub_ps(a.v, b.v)}; }
PTERON_VI Vec operator*(Vec a, Vec b) { return {_mm256_mul_ps(a.v, b.v)}; }
PTERON_VI Vec operator/(Vec a, Vec b) { return {_mm256_div_ps(a.v, b.v)}; }
// 1 / a from the 12-bit estimate and one Newton step (a few ulp; cheaper than a divide).
PTERON_VI Vec recip(Vec a) {
  const __m256 r = _mm256_rcp_ps(a.v);
  return {_mm256_fmadd_ps(r, _mm256_fnmadd_ps(a.v, r, _mm256_set1_ps(1.0f)), r)};
}
PTERON_VI Vec fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
PTERON_VI Vec vmax(Vec a, Vec b) { return {_mm256_max_ps(a.v, b.v)}; }
PTERON_VI Vec vmin(Vec a, Vec b) { return {_mm256_min_ps(a.v, b.v)}; }
PTERON_VI Vec vabs(Vec a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)}; }
PTERON_VI Vec copysign(Vec mag, Vec sign) {
  const __m256 s = _mm256_set1_ps(-0.0f);
  return {_mm256_or_ps(_mm256_andnot_ps(s, mag.v), _mm256_and_ps(s, sign.v))};
}
PTERON_VI float reduce_add(Vec a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
PTERON_VI float reduce_max(Vec a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
PTERON_VI Vec pow2(Vec n) {
  const __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(n.v), _mm256_set1_epi32(127));
  return {_mm256_castsi256_ps(_mm256_slli_epi32(i, 23))};
}
PTERON_VI Vec round_nearest(Vec a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
PTERON_VI Vec vfloor(Vec a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)};
}
PTERON_VI Vec vceil(Vec a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)};
}
PTERON_VI Vec vtrunc(Vec a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)};
}
PTERON_VI Vec vsqrt(Vec a) { return {_mm256_sqrt_ps(a.v)}; }
PTERON_VI Vec split_exponent(Vec x, Vec* e) {
  const __m256i bits = _mm256_castps_si256(x.v);
  e->v = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  const __m256i m = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                    _mm256_set1_epi32(0x3f000000));
  return {_mm256_castsi256_ps(m)};
}
PTERON_VI Vec select_gt(Vec a, Vec b, Vec if_gt, Vec otherwise) {
  return {_mm256_blendv_ps(otherwise.v, if_gt.v, _mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ))};
}
PTERON_VI Vec select_lt(Vec a, Vec b, Vec if_lt, Vec otherwise) {
  return {_mm256_blendv_ps(otherwise.v, if_lt.v, _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ))};
}
PTERON_VI Vec select_nan(Vec a, Vec if_nan, Vec otherwise) {
  return {_mm256_blendv_ps(otherwise.v, if_nan.v, _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q))};
}
PTERON_VI Vec complex_mul(Vec a, Vec b) {
  const __m256 swapped = _mm256_permute_ps(a.v, 0xB1);
  return {_mm256_fmaddsub_ps(a.v, _mm256_moveldup_ps(b.v),
                             _mm256_mul_ps(swapped, _mm256_movehdup_ps(b.v)))};
}
PTERON_VI Vec complex_set1(const float* p) {
  double pair;
  __builtin_memcpy(&pair, p, 8);
  return {_mm256_castpd_ps(_mm256_set1_pd(pair))};
}
PTERON_VI Vec select_bytes(const uint8_t* c, Vec if_set, Vec otherwise) {
  const __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c)));
  const __m256i zero = _mm256_cmpeq_epi32(w, _mm256_setzero_si256());
  return {_mm256_blendv_ps(if_set.v, otherwise.v, _mm256_castsi256_ps(zero))};
}

#elif PTERON_VEC_NEON
struct Vec {
  float32x4_t v;
  static constexpr int kLanes = 4;
};
PTERON_VI Vec load(const float* p) { return {vld1q_f32(p)}; }
PTERON_VI void store(float* p, Vec a) { vst1q_f32(p, a.v); }
PTERON_VI Vec set1(float x) { return {vdupq_n_f32(x)}; }
PTERON_VI Vec operator+(Vec a, Vec b) { return {vaddq_f32(a.v, b.v)}; }
PTERON_VI Vec operator-(Vec a, Vec b) { return {vsubq_f32(a.v, b.v)}; }
PTERON_VI Vec operator*(Vec a, Vec b) { return {vmulq_f32(a.v, b.v)}; }
PTERON_VI Vec operator/(Vec a, Vec b) { return {vdivq_f32(a.v, b.v)}; }
// 1 / a from the 8-bit estimate and two Newton steps.
PTERON_VI Vec recip(Vec a) {
  float32x4_t r = vrecpeq_f32(a.v);
  r = vmulq_f32(r, vrecpsq_f32(a.v, r));
  return {vmulq_f32(r, vrecpsq_f32(a.v, r))};
}
PTERON_VI Vec fma(Vec a, Vec b, Vec c) { return {vfmaq_f32(c.v, a.v, b.v)}; }
PTERON_VI Vec vmax(Vec a, Vec b) { return {vmaxq_f32(a.v, b.v)}; }
PTERON_VI Vec vmin(Vec a, Vec b) { return {vminq_f32(a.v, b.v)}; }
PTERON_VI Vec vabs(Vec a) { return {vabsq_f32(a.v)}; }
PTERON_VI Vec copysign(Vec mag, Vec sign) {
  return {vbslq_f32(vdupq_n_u32(0x80000000u), sign.v, mag.v)};
}
PTERON_VI float reduce_add(Vec a) { return vaddvq_f32(a.v); }
PTERON_VI float reduce_max(Vec a) { return vmaxvq_f32(a.v); }
PTERON_VI Vec pow2(Vec n) {
  const int32x4_t i = vaddq_s32(vcvtnq_s32_f32(n.v), vdupq_n_s32(127));
  return {vreinterpretq_f32_s32(vshlq_n_s32(i, 23))};
}
PTERON_VI Vec round_nearest(Vec a) { return {vrndnq_f32(a.v)}; }
PTERON_VI Vec vfloor(Vec a) { return {vrndmq_f32(a.v)}; }
PTERON_VI Vec vceil(Vec a) { return {vrndpq_f32(a.v)}; }
PTERON_VI Vec vtrunc(Vec a) { return {vrndq_f32(a.v)}; }
PTERON_VI Vec vsqrt(Vec a) { return {vsqrtq_f32(a.v)}; }
PTERON_VI Vec split_exponent(Vec x, Vec* e) {
  const uint32x4_t bits = vreinterpretq_u32_f32(x.v);
  e->v = vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(bits, 23)), vdupq_n_s32(126)));
  const uint32x4_t m =
      vorrq_u32(vandq_u32(bits, vdupq_n_u32(0x007fffffu)), vdupq_n_u32(0x3f000000u));
  return {vreinterpretq_f32_u32(m)};
}
PTERON_VI Vec select_gt(Vec a, Vec b, Vec if_gt, Vec otherwise) {
  return {vbslq_f32(vcgtq_f32(a.v, b.v), if_gt.v, otherwise.v)};
}
PTERON_VI Vec select_lt(Vec a, Vec b, Vec if_lt, Vec otherwise) {
  return {vbslq_f32(vcltq_f32(a.v, b.v), if_lt.v, otherwise.v)};
}
PTERON_VI Vec select_nan(Vec a, Vec if_nan, Vec otherwise) {
  return {vbslq_f32(vceqq_f32(a.v, a.v), otherwise.v, if_nan.v)};
}
PTERON_VI Vec complex_mul(Vec a, Vec b) {
  // (ar br - ai bi, ai br + ar bi): the imaginary products' sign flipped on the real lanes.
  const float32x4_t re = vtrn1q_f32(b.v, b.v), im = vtrn2q_f32(b.v, b.v);
  const float32x4_t sign = {-1.0f, 1.0f, -1.0f, 1.0f};
  return {vfmaq_f32(vmulq_f32(vrev64q_f32(a.v), vmulq_f32(im, sign)), a.v, re)};
}
PTERON_VI Vec complex_set1(const float* p) {
  return {vreinterpretq_f32_u64(vld1q_dup_u64(reinterpret_cast<const uint64_t*>(p)))};
}
PTERON_VI Vec select_bytes(const uint8_t* c, Vec if_set, Vec otherwise) {
  uint32_t four;
  __builtin_memcpy(&four, c, 4);
  const uint8x8_t bytes = vreinterpret_u8_u32(vdup_n_u32(four));
  const uint32x4_t w = vmovl_u16(vget_low_u16(vmovl_u8(bytes)));
  return {vbslq_f32(vtstq_u32(w, w), if_set.v, otherwise.v)};
}

#else  // scalar: one lane, same code paths
struct Vec {
  float v;
  static constexpr int kLanes = 1;
};
PTERON_VI Vec load(const float* p) { return {*p}; }
PTERON_VI void store(float* p, Vec a) { *p = a.v; }
PTERON_VI Vec set1(float x) { return {x}; }
PTERON_VI Vec operator+(Vec a, Vec b) { return {a.v + b.v}; }
PTERON_VI Vec operator-(Vec a, Vec b) { return {a.v - b.v}; }
PTERON_VI Vec operator*(Vec a, Vec b) { return {a.v * b.v}; }
PTERON_VI Vec operator/(Vec a, Vec b) { return {a.v / b.v}; }
PTERON_VI Vec recip(Vec a) { return {1.0f / a.v}; }
PTERON_VI Vec fma(Vec a, Vec b, Vec c) { return {a.v * b.v + c.v}; }
PTERON_VI Vec vmax(Vec a, Vec b) { return {a.v > b.v ? a.v : b.v}; }
PTERON_VI Vec vmin(Vec a, Vec b) { return {a.v < b.v ? a.v : b.v}; }
PTERON_VI Vec vabs(Vec a) { return {__builtin_fabsf(a.v)}; }
PTERON_VI Vec copysign(Vec mag, Vec sign) { return {__builtin_copysignf(mag.v, sign.v)}; }
PTERON_VI float reduce_add(Vec a) { return a.v; }
PTERON_VI float reduce_max(Vec a) { return a.v; }
PTERON_VI Vec pow2(Vec n) {
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n.v) + 127) << 23;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return {f};
}
PTERON_VI Vec round_nearest(Vec a) { return {__builtin_nearbyintf(a.v)}; }
PTERON_VI Vec vfloor(Vec a) { return {__builtin_floorf(a.v)}; }
PTERON_VI Vec vceil(Vec a) { return {__builtin_ceilf(a.v)}; }
PTERON_VI Vec vtrunc(Vec a) { return {__builtin_truncf(a.v)}; }
PTERON_VI Vec vsqrt(Vec a) { return {__builtin_sqrtf(a.v)}; }
PTERON_VI Vec split_exponent(Vec x, Vec* e) {
  uint32_t bits;
  __builtin_memcpy(&bits, &x.v, 4);
  e->v = static_cast<float>(static_cast<int32_t>(bits >> 23) - 126);
  bits = (bits & 0x007fffffu) | 0x3f000000u;
  float m;
  __builtin_memcpy(&m, &bits, 4);
  return {m};
}
PTERON_VI Vec select_gt(Vec a, Vec b, Vec if_gt, Vec otherwise) {
  return a.v > b.v ? if_gt : otherwise;
}
PTERON_VI Vec select_lt(Vec a, Vec b, Vec if_lt, Vec otherwise) {
  return a.v < b.v ? if_lt : otherwise;
}
PTERON_VI Vec select_nan(Vec a, Vec if_nan, Vec otherwise) {
  return a.v != a.v ? if_nan : otherwise;
}
PTERON_VI Vec select_bytes(const uint8_t* c, Vec if_set, Vec otherwise) {
  return *c != 0 ? if_set : otherwise;
}
#endif

constexpr int kLanes = Vec::kLanes;

// The arguments vexp computes: below kExpMin e^x is 0 (no denormals), above kExpMax +inf.
constexpr float kExpMin = -87.33f, kExpMax = 88.37f;

// e^x = 2^n e^r: Cody-Waite reduction x = n ln2 + r (ln2 in two parts), Cephes' degree-6
// polynomial for e^r; returns e^r and sets n.
PTERON_VI Vec exp_reduced(Vec xc, Vec* n) {
  *n = round_nearest(xc * set1(1.44269504088896341f));
  const Vec r = (xc - *n * set1(0.693359375f)) - *n * set1(-2.12194440e-4f);
  Vec p = set1(1.9875691500e-4f);
  p = fma(p, r, set1(1.3981999507e-3f));
  p = fma(p, r, set1(8.3334519073e-3f));
  p = fma(p, r, set1(4.1665795894e-2f));
  p = fma(p, r, set1(1.6666665459e-1f));
  p = fma(p, r, set1(5.0000001201e-1f));
  return fma(p * r, r, r + set1(1.0f));
}

// vexp's arithmetic for x already in [kExpMin, kExpMax] (no range selects), 2^n built in the
// exponent bits.
PTERON_VI Vec vexp_in_range(Vec xc) {
  Vec n;
  const Vec p = exp_reduced(xc, &n);
  return p * pow2(n);
}

// e^x within a few ulp over [kExpMin, kExpMax]: 0 below, +inf above. NaN stays NaN (a softmax
// row holding one becomes all NaN, as in torch); -inf gives 0.
PTERON_VI Vec vexp(Vec x) {
  const Vec hi = set1(kExpMax), lo = set1(kExpMin);
  const Vec y = vexp_in_range(vmax(vmin(x, hi), lo));
  return select_nan(x, x,
                    select_lt(x, lo, set1(0.0f), select_gt(x, hi, set1(__builtin_inff()), y)));
}

// e^x over all of float's range, denormal results included (vexp's range stops where 2^n
// leaves the normal exponents): the same reduction and polynomial, 2^n applied as two factors
// 2^(n/2) so neither leaves them. What aten::exp computes; the softmax and activations keep vexp.
PTERON_VI Vec vexp_full(Vec x) {
  Vec n;
  const Vec p = exp_reduced(vmax(vmin(x, set1(89.0f)), set1(-104.0f)), &n);
  const Vec half = round_nearest(n * set1(0.5f) - set1(0.25f));  // floor(n / 2)
  return select_nan(x, x, (p * pow2(half)) * pow2(n - half));
}

// tanh(x) as Eigen's float tanh computes it: an odd degree-13 over an even degree-6 polynomial
// in x on [-7.9053, 7.9053] (beyond, tanh rounds to +-1), and x itself below 0.0004 in
// magnitude, +-1 past 9. Within 6 ulp of tanh (checked against float64 over 2M points of [-20, 20]
// and a log grid down to 1e-30), where 1 - 2 / (e^2|x| + 1) lost small values' precision to the
// subtraction (relative error 1e-3 at x = 1e-4). NaN stays NaN.
PTERON_VI Vec vtanh(Vec x) {
  const Vec c = vmin(vmax(x, set1(-7.90531110763549805f)), set1(7.90531110763549805f));
  const Vec x2 = c * c;
  Vec p = fma(set1(-2.76076847742355e-16f), x2, set1(2.00018790482477e-13f));
  p = fma(p, x2, set1(-8.60467152213735e-11f));
  p = fma(p, x2, set1(5.12229709037114e-08f));
  p = fma(p, x2, set1(1.48572235717979e-05f));
  p = fma(p, x2, set1(6.37261928875436e-04f));
  p = fma(p, x2, set1(4.89352455891786e-03f)) * c;
  Vec q = fma(set1(1.19825839466702e-06f), x2, set1(1.18534705686654e-04f));
  q = fma(q, x2, set1(2.26843463243900e-03f));
  q = fma(q, x2, set1(4.89352518554385e-03f));
  // Past 9, float tanh is +-1 exactly (the rational stays an ulp short, which 1 + tanh, the
  // tanh GELU's, would turn into a value where torch has 0).
  const Vec a = vabs(x);
  const Vec r = select_gt(a, set1(9.0f), copysign(set1(1.0f), x), p / q);
  return select_nan(x, x, select_lt(a, set1(0.0004f), x, r));
}

// erf(x), Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 absolute, what torch's vectorised GELU
// computes (its relative error grows for small |x|, which 0.5 x (1 + erf) does not see; aten::erf
// uses verf).
PTERON_VI Vec verf_coarse(Vec x) {
  const Vec a = vabs(x);
  const Vec t = set1(1.0f) / fma(set1(0.3275911f), a, set1(1.0f));
  Vec p = set1(1.061405429f);
  p = fma(p, t, set1(-1.453152027f));
  p = fma(p, t, set1(1.421413741f));
  p = fma(p, t, set1(-0.284496736f));
  p = fma(p, t, set1(0.254829592f));
  p = p * t;
  const Vec y = set1(1.0f) - p * vexp(set1(0.0f) - a * a);
  return copysign(y, x);
}

// erf(x) within a few ulp: below 1 in magnitude x P(x^2), P of degree 6; on [1, 4]
// 1 - e^(-x^2) R(x), R = erfc(x) e^(x^2) a degree-12 polynomial in (x - 2.5) / 1.5 (both fitted
// here to float64 erf, relative error <= 1.4e-9 and 6e-9), e^(-x^2) with x^2's rounding error
// put back as a factor; past 4 erf rounds to +-1. NaN stays NaN.
PTERON_VI Vec verf(Vec x) {
  const Vec a = vmin(vabs(x), set1(4.0f));
  const Vec z = a * a;
  Vec s = set1(7.896614260971546e-05f);
  s = fma(s, z, set1(-8.023829432204366e-04f));
  s = fma(s, z, set1(5.189987365156412e-03f));
  s = fma(s, z, set1(-2.685476839542389e-02f));
  s = fma(s, z, set1(1.128361150622368e-01f));
  s = fma(s, z, set1(-3.761262893676758e-01f));
  s = fma(s, z, set1(1.128379225730896f)) * a;
  const Vec u = (a - set1(2.5f)) * set1(0.666666686534881592f);
  Vec r = set1(1.2459465324354824e-05f);
  r = fma(r, u, set1(-3.665917756734416e-05f));
  r = fma(r, u, set1(5.8979458117391914e-05f));
  r = fma(r, u, set1(-1.4468243170995265e-04f));
  r = fma(r, u, set1(4.100349033251405e-04f));
  r = fma(r, u, set1(-1.0163930710405111e-03f));
  r = fma(r, u, set1(2.403981052339077e-03f));
  r = fma(r, u, set1(-5.567645188421011e-03f));
  r = fma(r, u, set1(1.2489181011915207e-02f));
  r = fma(r, u, set1(-2.7005670592188835e-02f));
  r = fma(r, u, set1(5.611051619052887e-02f));
  r = fma(r, u, set1(-1.1152100563049316e-01f));
  r = fma(r, u, set1(2.1080636978149414e-01f));
  const Vec z_low = fma(a, a, set1(0.0f) - z);  // a^2 - z, exact
  const Vec e = vexp(set1(0.0f) - z) * (set1(1.0f) - z_low);
  const Vec big = fma(set1(0.0f) - e, r, set1(1.0f));
  return select_nan(x, x, copysign(select_lt(a, set1(1.0f), s, big), x));
}

// e^x - 1 without the cancellation of e^x - 1 near 0: below 0.5 in magnitude its Taylor
// series to x^10 / 10! (truncation under 3e-10 relative), beyond vexp_full(x) - 1. Within a few
// ulp; NaN stays NaN.
PTERON_VI Vec vexpm1(Vec x) {
  Vec p = fma(x, set1(1.0f / 10), set1(1.0f));
  p = fma(x * set1(1.0f / 9), p, set1(1.0f));
  p = fma(x * set1(1.0f / 8), p, set1(1.0f));
  p = fma(x * set1(1.0f / 7), p, set1(1.0f));
  p = fma(x * set1(1.0f / 6), p, set1(1.0f));
  p = fma(x * set1(1.0f / 5), p, set1(1.0f));
  p = fma(x * set1(1.0f / 4), p, set1(1.0f));
  p = fma(x * set1(1.0f / 3), p, set1(1.0f));
  p = fma(x * set1(0.5f), p, set1(1.0f));
  const Vec small = x * p;
  return select_lt(vabs(x), set1(0.5f), small, vexp_full(x) - set1(1.0f));
}

// log(x) as Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in
// m - 1, e ln2 added in two parts. Within a few ulp over the positive floats, denormals
// included (scaled by 2^23 first); log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays.
PTERON_VI Vec vlog(Vec x) {
  const Vec min_normal = set1(1.17549435e-38f);
  const Vec scaled = select_lt(x, min_normal, x * set1(8388608.0f), x);
  Vec e;
  Vec m = split_exponent(scaled, &e);
  e = select_lt(x, min_normal, e - set1(23.0f), e);
  const Vec below = set1(0.707106781186547524f);
  e = select_lt(m, below, e - set1(1.0f), e);
  m = select_lt(m, below, m + m - set1(1.0f), m - set1(1.0f));
  const Vec z = m * m;
  Vec p = set1(7.0376836292e-2f);
  p = fma(p, m, set1(-1.1514610310e-1f));
  p = fma(p, m, set1(1.1676998740e-1f));
  p = fma(p, m, set1(-1.2420140846e-1f));
  p = fma(p, m, set1(1.4249322787e-1f));
  p = fma(p, m, set1(-1.6668057665e-1f));
  p = fma(p, m, set1(2.0000714765e-1f));
  p = fma(p, m, set1(-2.4999993993e-1f));
  p = fma(p, m, set1(3.3333331174e-1f));
  Vec y = p * m * z;
  y = fma(e, set1(-2.12194440e-4f), y);
  y = fma(z, set1(-0.5f), y);
  Vec r = fma(e, set1(0.693359375f), m + y);
  const Vec inf = set1(__builtin_inff());
  r = select_gt(x, set1(3.40282347e+38f), inf, r);
  r = select_gt(x, set1(0.0f), r, set1(0.0f) - inf);  // 0 and -0 (and below, next line)
  r = select_lt(x, set1(0.0f), set1(__builtin_nanf("")), r);
  return select_nan(x, x, r);
}

// log(1 + x) for x >= -1 without losing x where 1 + x rounds (Goldberg's form:
// log(u) * x / (u - 1) with u = 1 + x; x itself where u is 1). log1p(inf) = inf.
PTERON_VI Vec vlog1p(Vec x) {
  const Vec u = set1(1.0f) + x;
  const Vec d = u - set1(1.0f);
  const Vec r = select_gt(vabs(d), set1(0.0f), vlog(u) * (x / d), x);
  return select_gt(x, set1(3.40282347e+38f), x, select_nan(x, x, r));
}

// The largest magnitude vsin / vcos reduce accurately (|q| < 2^13 for the four-part pi/2);
// callers compute larger, infinite and NaN lanes with the C library.
constexpr float kTrigMax = 8192.0f;

// sin(x) (cosine = false) or cos(x) for |x| <= kTrigMax: x = q pi/2 + r with |r| <= pi/4 (pi/2
// in four parts, SLEEF's split of pi halved: each subtraction exact but the last, so r keeps
// its precision near the zeros of sin and cos), Cephes' minimax
// polynomials for sin and cos on [-pi/4, pi/4], the quadrant (q, plus 1 for cos) mod 4 picking
// which and its sign. Within a few ulp; sin(-0) = -0.
PTERON_VI Vec vsin_cos(Vec x, bool cosine) {
  const Vec q = round_nearest(x * set1(0.636619772367581343f));
  Vec r = fma(q, set1(-1.5703125f), x);
  r = fma(q, set1(-4.8351287841796875e-4f), r);
  r = fma(q, set1(-3.13855707645416259765625e-7f), r);
  r = fma(q, set1(-6.077100628276710381e-11f), r);
  const Vec z = r * r;
  Vec s = fma(set1(-1.9515295891e-4f), z, set1(8.3321608736e-3f));
  s = fma(s, z, set1(-1.6666654611e-1f));
  s = fma(s * z, r, r);
  Vec c = fma(set1(2.443315711809948e-5f), z, set1(-1.388731625493765e-3f));
  c = fma(c, z, set1(4.166664568298827e-2f));
  c = fma(c * z, z, fma(z, set1(-0.5f), set1(1.0f)));
  const Vec k = cosine ? q + set1(1.0f) : q;
  const Vec quadrant = k - set1(4.0f) * round_nearest(k * set1(0.25f) - set1(0.375f));
  const Vec odd = quadrant - set1(2.0f) * round_nearest(quadrant * set1(0.5f) - set1(0.25f));
  const Vec y = select_gt(odd, set1(0.5f), c, s);
  const Vec r_signed = select_gt(quadrant, set1(1.5f), set1(0.0f) - y, y);
  // Below 2^-12 sin(x) rounds to x; returning x keeps -0's sign, which the reduction's
  // fused multiply-adds (-0 * -pi/2 + -0 = +0) drop.
  return cosine ? r_signed : select_lt(vabs(x), set1(0.000244140625f), x, r_signed);
}

#undef PTERON_VI

}  // namespace pteron::opt::PTERON_ISA
