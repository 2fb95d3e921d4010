// QLinearKernels for AVX2 + FMA (compiled with -mavx2 -mfma): int8 -> float widening with FMA
// for the weight-only paths, `vpmaddubsw` (unsigned nibble x signed activation, pairs summed
// in int16: at most 2 * 15 * 128, no saturation) then `vpmaddwd` into int32 for 8da4w.
#include <immintrin.h>

#include "kernels/optimized/qlinear/qlinear_impl_scalar.h"
#include "kernels/optimized/qlinear/qlinear_rows.h"

namespace pteron::opt::qavx2 {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

inline __m256 widen8(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

template <int R>
void q8w_t(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x, int64_t x_rs,
           float* out, int64_t out_step) {
  __m256 tot[R];
  float tail_tot[R];
  for (int r = 0; r < R; ++r) {
    tot[r] = _mm256_setzero_ps();
    tail_tot[r] = 0.0f;
  }
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    const int64_t end = g0 + G;
    __m256 a0[R], a1[R];
    float tail[R];
    for (int r = 0; r < R; ++r) {
      a0[r] = a1[r] = _mm256_setzero_ps();
      tail[r] = 0.0f;
    }
    int64_t k = g0;
    for (; k + 16 <= end; k += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k));
      const __m256 w0 = widen8(b), w1 = widen8(_mm_srli_si128(b, 8));
      for (int r = 0; r < R; ++r) {
        a0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * x_rs + k), w0, a0[r]);
        a1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * x_rs + k + 8), w1, a1[r]);
      }
    }
    for (; k + 8 <= end; k += 8) {
      const __m256 w0 = widen8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + k)));
      for (int r = 0; r < R; ++r)
        a0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * x_rs + k), w0, a0[r]);
    }
    for (; k < end; ++k) {
      for (int r = 0; r < R; ++r) tail[r] += x[r * x_rs + k] * static_cast<float>(w[k]);
    }
    const float s = scales[g0 / G];
    const __m256 vs = _mm256_set1_ps(s);
    for (int r = 0; r < R; ++r) {
      tot[r] = _mm256_fmadd_ps(_mm256_add_ps(a0[r], a1[r]), vs, tot[r]);
      tail_tot[r] += s * tail[r];
    }
  }
  for (int r = 0; r < R; ++r) out[r * out_step] = hsum(tot[r]) + tail_tot[r];
}

// The 32 weights of one int4 block as signed bytes in order (q = nibble - 8).
inline __m256i unpack_block(const uint8_t* p, bool minus8) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0F);
  __m128i lo = _mm_and_si128(b, m), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  if (minus8) {
    lo = _mm_sub_epi8(lo, _mm_set1_epi8(8));
    hi = _mm_sub_epi8(hi, _mm_set1_epi8(8));
  }
  return _mm256_set_m128i(hi, lo);
}

template <int R>
void q4w_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
           int64_t x_rs, float* out, int64_t out_step) {
  __m256 tot[R];
  for (int r = 0; r < R; ++r) tot[r] = _mm256_setzero_ps();
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    __m256 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm256_setzero_ps();
    for (int64_t k = g0; k < g0 + G; k += 32) {
      const __m256i q = unpack_block(w + k / 2, true);
      const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
      const __m256 w0 = widen8(lo), w1 = widen8(_mm_srli_si128(lo, 8));
      const __m256 w2 = widen8(hi), w3 = widen8(_mm_srli_si128(hi, 8));
      for (int r = 0; r < R; ++r) {
        const float* xr = x + r * x_rs + k;
        a0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xr), w0, a0[r]);
        a1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xr + 8), w1, a1[r]);
        a0[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xr + 16), w2, a0[r]);
        a1[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xr + 24), w3, a1[r]);
      }
    }
    const __m256 vs = _mm256_set1_ps(scales[g0 / G]);
    for (int r = 0; r < R; ++r) tot[r] = _mm256_fmadd_ps(_mm256_add_ps(a0[r], a1[r]), vs, tot[r]);
  }
  for (int r = 0; r < R; ++r) out[r * out_step] = hsum(tot[r]);
}

template <int R>
void q4a8_t(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs,
            int32_t* dots) {
  const int64_t groups = K / G;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < groups; ++g) {
    __m256i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_si256();
    for (int64_t k = g * G; k < (g + 1) * G; k += 32) {
      const __m256i u = unpack_block(w + k / 2, false);
      for (int r = 0; r < R; ++r) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + r * xq_rs + k));
        acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, xv), ones));
      }
    }
    for (int r = 0; r < R; ++r) dots[r * groups + g] = hsum_i32(acc[r]);
  }
}

void q8w_rows(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
              int64_t x_rs, int rows, float* out, int64_t out_step) {
  qrows::with_rows(
      rows, [&](auto r) { q8w_t<decltype(r)::value>(w, scales, K, G, x, x_rs, out, out_step); });
}

void q4w_rows(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
              int64_t x_rs, int rows, float* out, int64_t out_step) {
  qrows::with_rows(
      rows, [&](auto r) { q4w_t<decltype(r)::value>(w, scales, K, G, x, x_rs, out, out_step); });
}

void q4a8_rows(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs, int rows,
               int32_t* dots) {
  qrows::with_rows(rows, [&](auto r) { q4a8_t<decltype(r)::value>(w, K, G, xq, xq_rs, dots); });
}

}  // namespace

extern const QLinearKernels kTable = {"avx2", q8w_rows, q4w_rows, q4a8_rows};

}  // namespace pteron::opt::qavx2
