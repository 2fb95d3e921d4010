// QLinearKernels for AVX2 + FMA (compiled with -mavx2 -mfma): int8 -> float widening with FMA
// for the weight-only paths, `vpmaddubsw` (unsigned nibble x signed activation, pairs summed
// in int16: at most 2 * 15 * 128, no saturation) then `vpmaddwd` into int32 for 8da4w.
#include <immintrin.h>

#include <cstring>

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

// One int4 block (32 weights at w, activations at x) into the lanes a0..a3 (weights 0-7, 8-15,
// 16-23, 24-31): each weight float(q) * scale, then one FMA.
__attribute__((always_inline)) inline void q4w_block(const uint8_t* w, const float* x, __m256 vs,
                                                     __m256& a0, __m256& a1, __m256& a2,
                                                     __m256& a3) {
  const __m128i m = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(b, m), eight);
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), m), eight);
  a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_mul_ps(widen8(lo), vs), a0);
  a1 =
      _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_mul_ps(widen8(_mm_srli_si128(lo, 8)), vs), a1);
  a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), _mm256_mul_ps(widen8(hi), vs), a2);
  a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), _mm256_mul_ps(widen8(_mm_srli_si128(hi, 8)), vs),
                       a3);
}

// qscalar::q4w_rows' lanes and order (qlinear_impl_scalar.h) for one row: each 16-lane vector
// of the reference is two 8-lane ones here (lanes 0-7, 8-15), so the 64 lanes are eight
// accumulators (a* even blocks, c* odd ones).
void q4w_row(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
             float* out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0;
  __m256 vs = a0;
  const float* group_scale = scales;  // the next group's (no division in the loop)
  int64_t next_group = 0;
  const auto scale_for = [&](int64_t k) {
    if (k == next_group) {
      vs = _mm256_set1_ps(*group_scale++);
      next_group += G;
    }
  };
  int64_t k = 0;
  for (; k + 64 <= K; k += 64) {
    scale_for(k);
    q4w_block(w + k / 2, x + k, vs, a0, a1, a2, a3);
    scale_for(k + 32);
    q4w_block(w + k / 2 + 16, x + k + 32, vs, c0, c1, c2, c3);
  }
  if (k < K) {
    scale_for(k);
    q4w_block(w + k / 2, x + k, vs, a0, a1, a2, a3);
  }
  // 16 lanes: (i + (i + 32)) + ((i + 16) + (i + 48)), low and high eight; then 8, 4, 2, 1.
  const __m256 v_lo = _mm256_add_ps(_mm256_add_ps(a0, c0), _mm256_add_ps(a2, c2));
  const __m256 v_hi = _mm256_add_ps(_mm256_add_ps(a1, c1), _mm256_add_ps(a3, c3));
  *out = hsum(_mm256_add_ps(v_lo, v_hi));
}

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

inline float hmin(__m256 v) {
  __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_min_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_min_ss(s, _mm_movehdup_ps(s)));
}

inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

// qscalar::a8_quantize_row's arithmetic 8 lanes at a time (as the AVX-512 table's).
void a8_quantize_row(const float* x, int64_t K, int64_t G, float eps, int8_t* xq, float* scale,
                     int32_t* zero, int32_t* xoff) {
  if (K % 8 != 0 || G % 8 != 0)
    return qscalar::a8_quantize_row(x, K, G, eps, xq, scale, zero, xoff);
  __m256 vlo = _mm256_setzero_ps(), vhi = vlo;
  for (int64_t k = 0; k < K; k += 8) {
    const __m256 v = _mm256_loadu_ps(x + k);
    vlo = _mm256_min_ps(v, vlo);
    vhi = _mm256_max_ps(v, vhi);
  }
  const float lo = hmin(vlo), hi = hmax(vhi);
  float s = (hi - lo) / 255.0f;
  s = s < eps ? eps : s;
  float zp = -128.0f - std::nearbyint(lo / s);
  zp = zp < -128.0f ? -128.0f : (zp > 127.0f ? 127.0f : zp);
  const __m256 inv = _mm256_set1_ps(1.0f / s), vz = _mm256_set1_ps(zp);
  const __m256 qmin = _mm256_set1_ps(-128.0f), qmax = _mm256_set1_ps(127.0f);
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    __m256i sum = _mm256_setzero_si256();
    for (int64_t k = g0; k < g0 + G; k += 8) {
      __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + k), inv),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, vz), qmin), qmax);
      const __m256i qi = _mm256_cvtps_epi32(q);
      sum = _mm256_add_epi32(sum, qi);
      // int32 -> int8 (values in range): pack to int16 then int8 within 128-bit lanes.
      const __m128i w =
          _mm_packs_epi32(_mm256_castsi256_si128(qi), _mm256_extracti128_si256(qi, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(xq + k), _mm_packs_epi16(w, w));
    }
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(1, 0, 3, 2)));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1)));
    xoff[g0 / G] = 8 * _mm_cvtsi128_si32(t);
  }
  *scale = s;
  *zero = static_cast<int32_t>(zp);
}

// R rows x NU half panels (8 channels, one vector each; unit u is half u % 2 of panel u / 2).
// Per k-block and row, the low and high nibbles' `vpmaddubsw` pairs are added in int16 (at
// most 4 * 15 * 128 per lane) and `vpmaddwd` by ones sums them into the int32 lanes.
template <int R, int NU>
void a8w4_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const int8_t* xq,
            int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, float* acc, int64_t acc_rs) {
  const int64_t groups = K / G, panel_bytes = K * 8, panel_scales = groups * kA8W4Panel;
  const __m256i m = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  const uint8_t* wu[NU];
  const float* su[NU];
  for (int u = 0; u < NU; ++u) {
    wu[u] = w + (u / 2) * panel_bytes + (u % 2) * 32;
    su[u] = scales + (u / 2) * panel_scales + (u % 2) * 8;
  }
  __m256 f[R][NU];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NU; ++u) f[r][u] = _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m256i d[R][NU];  // started at -xoff: the exact int32 of subtracting it after the group
    for (int r = 0; r < R; ++r) {
      const __m256i start = _mm256_set1_epi32(-xoff[r * xoff_rs + g]);
      for (int u = 0; u < NU; ++u) d[r][u] = start;
    }
    for (int64_t k = g * G; k < (g + 1) * G; k += 8) {
      for (int u = 0; u < NU; ++u) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wu[u] + k * 8));
        const __m256i lo = _mm256_and_si256(v, m);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
        for (int r = 0; r < R; ++r) {
          const int8_t* x = xq + r * xq_rs + k;
          const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(lo, broadcast4(x)),
                                                 _mm256_maddubs_epi16(hi, broadcast4(x + 4)));
          d[r][u] = _mm256_add_epi32(d[r][u], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int u = 0; u < NU; ++u) {
        const __m256 s = _mm256_loadu_ps(su[u] + g * kA8W4Panel);
        f[r][u] = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(d[r][u]), f[r][u]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NU; ++u) _mm256_storeu_ps(acc + r * acc_rs + u * 8, f[r][u]);
}

// Decode (one row): a panel (two half panels, one sequential stream) per pass. Prefill: up to
// four rows per half panel (AVX2's 16 registers hold 4 int32 + 4 float accumulators, the
// weights and constants).
void a8w4_tile(const uint8_t* w, const float* scales, int64_t K, int64_t G, int panels,
               const int8_t* xq, int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, int rows,
               float* acc, int64_t acc_rs) {
  const int64_t panel_bytes = K * 8, panel_scales = K / G * kA8W4Panel;
  int p = 0;
  if (rows == 1) {
    for (; p < panels; ++p) {
      a8w4_t<1, 2>(w + p * panel_bytes, scales + p * panel_scales, K, G, xq, xq_rs, xoff, xoff_rs,
                   acc + p * kA8W4Panel, acc_rs);
    }
  }
  for (; p < panels; ++p) {
    for (int h = 0; h < 2; ++h) {
      const uint8_t* wh = w + p * panel_bytes + h * 32;
      const float* sh = scales + p * panel_scales + h * 8;
      float* ah = acc + p * kA8W4Panel + h * 8;
      for (int r0 = 0; r0 < rows; r0 += 4) {
        qrows::with_rows(rows - r0 < 4 ? rows - r0 : 4, [&](auto r) {
          a8w4_t<decltype(r)::value, 1>(wh, sh, K, G, xq + r0 * xq_rs, xq_rs, xoff + r0 * xoff_rs,
                                        xoff_rs, ah + r0 * acc_rs, acc_rs);
        });
      }
    }
  }
}

void q8w_rows(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
              int64_t x_rs, int rows, float* out, int64_t out_step) {
  qrows::with_rows(
      rows, [&](auto r) { q8w_t<decltype(r)::value>(w, scales, K, G, x, x_rs, out, out_step); });
}

void q4w_rows(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
              int64_t x_rs, int rows, float* out, int64_t out_step) {
  for (int r = 0; r < rows; ++r) q4w_row(w, scales, K, G, x + r * x_rs, out + r * out_step);
}

}  // namespace

extern const QLinearKernels kTable = {
    "avx2",    q8w_rows, q4w_rows, qscalar::q8w_dequant, qscalar::q4w_dequant, a8_quantize_row,
    a8w4_tile, 4,        1,        qscalar::int8_tile};

}  // namespace pteron::opt::qavx2
