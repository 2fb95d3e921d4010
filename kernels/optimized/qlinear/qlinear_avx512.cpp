// QLinearKernels for AVX-512 BW + VNNI (compiled with -mavx512f -mavx512bw -mavx512vnni):
// 16-lane FMA for the weight-only paths; `vpdpbusd` (unsigned nibble x signed activation,
// four products summed into each int32 lane in one instruction) for 8da4w, two int4 blocks
// (64 weights) per instruction.
#include <immintrin.h>

#include "kernels/optimized/qlinear/qlinear_impl_scalar.h"
#include "kernels/optimized/qlinear/qlinear_rows.h"

namespace pteron::opt::qavx512 {
namespace {

inline __m512 widen16(__m128i bytes) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)); }

template <int R>
void q8w_t(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x, int64_t x_rs,
           float* out, int64_t out_step) {
  __m512 tot[R];
  float tail_tot[R];
  for (int r = 0; r < R; ++r) {
    tot[r] = _mm512_setzero_ps();
    tail_tot[r] = 0.0f;
  }
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    const int64_t end = g0 + G;
    __m512 a0[R], a1[R];
    float tail[R];
    for (int r = 0; r < R; ++r) {
      a0[r] = a1[r] = _mm512_setzero_ps();
      tail[r] = 0.0f;
    }
    int64_t k = g0;
    for (; k + 32 <= end; k += 32) {
      const __m512 w0 = widen16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k)));
      const __m512 w1 = widen16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k + 16)));
      for (int r = 0; r < R; ++r) {
        a0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k), w0, a0[r]);
        a1[r] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k + 16), w1, a1[r]);
      }
    }
    for (; k + 16 <= end; k += 16) {
      const __m512 w0 = widen16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k)));
      for (int r = 0; r < R; ++r)
        a0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k), w0, a0[r]);
    }
    for (; k < end; ++k) {
      for (int r = 0; r < R; ++r) tail[r] += x[r * x_rs + k] * static_cast<float>(w[k]);
    }
    const float s = scales[g0 / G];
    const __m512 vs = _mm512_set1_ps(s);
    for (int r = 0; r < R; ++r) {
      tot[r] = _mm512_fmadd_ps(_mm512_add_ps(a0[r], a1[r]), vs, tot[r]);
      tail_tot[r] += s * tail[r];
    }
  }
  for (int r = 0; r < R; ++r) out[r * out_step] = _mm512_reduce_add_ps(tot[r]) + tail_tot[r];
}

template <int R>
void q4w_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
           int64_t x_rs, float* out, int64_t out_step) {
  const __m128i m = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  __m512 tot[R];
  for (int r = 0; r < R; ++r) tot[r] = _mm512_setzero_ps();
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    __m512 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    for (int64_t k = g0; k < g0 + G; k += 32) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k / 2));
      const __m512 w0 = widen16(_mm_sub_epi8(_mm_and_si128(b, m), eight));
      const __m512 w1 = widen16(_mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), m), eight));
      for (int r = 0; r < R; ++r) {
        a0[r] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k), w0, a0[r]);
        a1[r] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k + 16), w1, a1[r]);
      }
    }
    const __m512 vs = _mm512_set1_ps(scales[g0 / G]);
    for (int r = 0; r < R; ++r) tot[r] = _mm512_fmadd_ps(_mm512_add_ps(a0[r], a1[r]), vs, tot[r]);
  }
  for (int r = 0; r < R; ++r) out[r * out_step] = _mm512_reduce_add_ps(tot[r]);
}

// Two consecutive int4 blocks (64 weights, 32 bytes) as unsigned nibbles in order:
// [lo0 hi0 lo1 hi1] in 16-byte lanes.
inline __m512i unpack_pair(const uint8_t* p) {
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i m = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(b, m), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m);
  const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // lo0 lo1 hi0 hi1
  return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
}

// One block (32 weights) as unsigned nibbles, in a 256-bit vector.
inline __m256i unpack_one(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

template <int R>
void q4a8_t(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs,
            int32_t* dots) {
  const int64_t groups = K / G;
  if (G == 32) {  // two groups per instruction, reduced half by half
    int64_t g = 0;
    for (; g + 2 <= groups; g += 2) {
      const __m512i u = unpack_pair(w + g * 16);
      for (int r = 0; r < R; ++r) {
        const __m512i xv = _mm512_loadu_si512(xq + r * xq_rs + g * 32);
        const __m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, xv);
        // Both halves' sums at once (cheaper than two masked reductions).
        __m256i h = _mm256_hadd_epi32(_mm512_castsi512_si256(d), _mm512_extracti64x4_epi64(d, 1));
        h = _mm256_hadd_epi32(h, h);  // [L03 H03 L03 H03 | L47 H47 L47 H47]
        const __m128i t = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        dots[r * groups + g] = _mm_cvtsi128_si32(t);
        dots[r * groups + g + 1] = _mm_extract_epi32(t, 1);
      }
    }
    if (g < groups) {
      const __m256i u = unpack_one(w + g * 16);
      for (int r = 0; r < R; ++r) {
        const __m256i xv =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + r * xq_rs + g * 32));
        const __m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(u),
                                              _mm512_zextsi256_si512(xv));
        dots[r * groups + g] = _mm512_reduce_add_epi32(d);
      }
    }
    return;
  }
  for (int64_t g = 0; g < groups; ++g) {
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
    int64_t k = g * G;
    const int64_t end = k + G;
    for (; k + 64 <= end; k += 64) {
      const __m512i u = unpack_pair(w + k / 2);
      for (int r = 0; r < R; ++r)
        acc[r] = _mm512_dpbusd_epi32(acc[r], u, _mm512_loadu_si512(xq + r * xq_rs + k));
    }
    if (k < end) {  // an odd block (G = 96, 160, ...)
      const __m512i u = _mm512_zextsi256_si512(unpack_one(w + k / 2));
      for (int r = 0; r < R; ++r) {
        const __m512i xv = _mm512_zextsi256_si512(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + r * xq_rs + k)));
        acc[r] = _mm512_dpbusd_epi32(acc[r], u, xv);
      }
    }
    for (int r = 0; r < R; ++r) dots[r * groups + g] = _mm512_reduce_add_epi32(acc[r]);
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

extern const QLinearKernels kTable = {"avx512-vnni", q8w_rows, q4w_rows, q4a8_rows};

}  // namespace pteron::opt::qavx512
