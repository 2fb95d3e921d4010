// QLinearKernels for AVX-512 BW + VNNI (compiled with -mavx512f -mavx512bw -mavx512vnni):
// 16-lane FMA for the weight-only paths; `vpdpbusd` (unsigned nibble x signed activation,
// four products summed into each int32 lane in one instruction) for 8da4w, 16 channels x 4
// weights per instruction.
#include <immintrin.h>

#include <cstring>

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

// qscalar::q4w_rows' lanes and order (qlinear_impl_scalar.h), R rows at once. Per block, one
// vpmovzxbd widens the 16 bytes to int32 lanes; vpermps reads only an index's low four bits,
// so it looks the low nibbles up in the group's table of 16 dequantized weights (q * scale) as
// they are and the high nibbles after one shift: no masks, no int -> float converts.
template <int R>
void q4w_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
           int64_t x_rs, float* out, int64_t out_step) {
  const __m512 q = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  __m512 acc[R][4];  // block parity x nibble half: lanes 0-15, 16-31, 32-47, 48-63
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_ps();
  __m512 table = _mm512_setzero_ps();
  const float* group_scale = scales;  // the next group's (no division in the loop)
  int64_t next_group = 0;
  // Block k into accumulators j (lanes of the low nibbles) and j + 1 (the high ones).
  const auto block = [&](int64_t k, int j) {
    if (k == next_group) {
      table = _mm512_mul_ps(q, _mm512_set1_ps(*group_scale++));
      next_group += G;
    }
    // The stream 256 bytes ahead: measured 15-50% faster from memory on Zen 4 than leaving it
    // to the hardware prefetcher (faster in cache, this loop was slower from memory without).
    _mm_prefetch(reinterpret_cast<const char*>(w + k / 2) + 256, _MM_HINT_T0);
    const __m512i b =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k / 2)));
    const __m512 lo = _mm512_permutexvar_ps(b, table);
    const __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), table);
    for (int r = 0; r < R; ++r) {
      acc[r][j] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k), lo, acc[r][j]);
      acc[r][j + 1] = _mm512_fmadd_ps(_mm512_loadu_ps(x + r * x_rs + k + 16), hi, acc[r][j + 1]);
    }
  };
  int64_t k = 0;
  for (; k + 64 <= K; k += 64) {
    block(k, 0);
    block(k + 32, 2);
  }
  if (k < K) block(k, 0);
  for (int r = 0; r < R; ++r) {
    const __m512 v16 =
        _mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][2]), _mm512_add_ps(acc[r][1], acc[r][3]));
    const __m256 v8 =
        _mm256_add_ps(_mm512_castps512_ps256(v16),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v16), 1)));
    const __m128 v4 = _mm_add_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps(v8, 1));
    const __m128 v2 = _mm_add_ps(v4, _mm_movehl_ps(v4, v4));
    out[r * out_step] = _mm_cvtss_f32(_mm_add_ss(v2, _mm_movehdup_ps(v2)));
  }
}

// acc += w (16 lanes x 4 unsigned bytes) . the four int8 activations at x, broadcast to every
// lane by vpdpbusd's {1to16} memory operand. Written as asm: GCC 12 copies the accumulator
// of the intrinsic around every call (it does not tie it to the destination), which with
// eight rows ran out of registers and spilled the float sums inside the loop.
using Int32Alias = int32_t __attribute__((may_alias));
inline __m512i dpbusd_broadcast(__m512i acc, __m512i w, const int8_t* x) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(w), "m"(*reinterpret_cast<const Int32Alias*>(x)));
  return acc;
}

// qscalar::a8_quantize_row's arithmetic 16 lanes at a time (vminps / vmaxps keep the running
// value when x is NaN, as the scalar compare does; roundscale rounds half to even, as nearbyint).
void a8_quantize_row(const float* x, int64_t K, int64_t G, float eps, int8_t* xq, float* scale,
                     int32_t* zero, int32_t* xoff) {
  if (K % 16 != 0 || G % 16 != 0)
    return qscalar::a8_quantize_row(x, K, G, eps, xq, scale, zero, xoff);
  __m512 vlo = _mm512_setzero_ps(), vhi = vlo;
  for (int64_t k = 0; k < K; k += 16) {
    const __m512 v = _mm512_loadu_ps(x + k);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  const float lo = _mm512_reduce_min_ps(vlo), hi = _mm512_reduce_max_ps(vhi);
  float s = (hi - lo) / 255.0f;
  s = s < eps ? eps : s;
  float zp = -128.0f - std::nearbyint(lo / s);
  zp = zp < -128.0f ? -128.0f : (zp > 127.0f ? 127.0f : zp);
  const __m512 inv = _mm512_set1_ps(1.0f / s), vz = _mm512_set1_ps(zp);
  const __m512 qmin = _mm512_set1_ps(-128.0f), qmax = _mm512_set1_ps(127.0f);
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    __m512i sum = _mm512_setzero_si512();
    for (int64_t k = g0; k < g0 + G; k += 16) {
      __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(x + k), inv),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, vz), qmin), qmax);
      const __m512i qi = _mm512_cvtps_epi32(q);
      sum = _mm512_add_epi32(sum, qi);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(xq + k), _mm512_cvtepi32_epi8(qi));
    }
    xoff[g0 / G] = 8 * _mm512_reduce_add_epi32(sum);
  }
  *scale = s;
  *zero = static_cast<int32_t>(zp);
}

// R rows x NP panels (16 channels each, one vector per row and panel): per group, the int32
// products in lanes (one channel each, no horizontal sum), then one FMA into the float sum.
template <int R, int NP>
void a8w4_t(const uint8_t* w, const float* scales, int64_t K, int64_t G, const int8_t* xq,
            int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, float* acc, int64_t acc_rs) {
  const int64_t groups = K / G, panel_bytes = K * 8, panel_scales = groups * kA8W4Panel;
  const __m512i m = _mm512_set1_epi8(0x0F);
  __m512 f[R][NP];
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < NP; ++p) f[r][p] = _mm512_setzero_ps();
  // Several rows: one integer chain per row and panel, started at -xoff (the sums are exact
  // in any order, so this is the same int32 as adding two chains and subtracting after): the
  // group's epilogue is a convert and an FMA, the add and subtract replaced by one broadcast,
  // with 32-weight groups much of the work. One row: the low and high nibbles in two chains,
  // else each product waits for the last.
  constexpr bool kSplit = R < 4;
  for (int64_t g = 0; g < groups; ++g) {
    __m512i d[R][NP], e[R][NP];
    for (int r = 0; r < R; ++r) {
      const __m512i start = _mm512_set1_epi32(-xoff[r * xoff_rs + g]);
      for (int p = 0; p < NP; ++p) {
        d[r][p] = start;
        if (kSplit) e[r][p] = _mm512_setzero_si512();
      }
    }
    for (int64_t k = g * G; k < (g + 1) * G; k += 8) {
      for (int p = 0; p < NP; ++p) {
        const __m512i v = _mm512_loadu_si512(w + p * panel_bytes + k * 8);
        const __m512i lo = _mm512_and_si512(v, m);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
        for (int r = 0; r < R; ++r) {
          const int8_t* x = xq + r * xq_rs + k;
          d[r][p] = dpbusd_broadcast(d[r][p], lo, x);
          if (kSplit) {
            e[r][p] = dpbusd_broadcast(e[r][p], hi, x + 4);
          } else {
            d[r][p] = dpbusd_broadcast(d[r][p], hi, x + 4);
          }
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int p = 0; p < NP; ++p) {
        const __m512 s = _mm512_loadu_ps(scales + p * panel_scales + g * kA8W4Panel);
        const __m512i sum = kSplit ? _mm512_add_epi32(d[r][p], e[r][p]) : d[r][p];
        f[r][p] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(sum), f[r][p]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < NP; ++p) _mm512_storeu_ps(acc + r * acc_rs + p * kA8W4Panel, f[r][p]);
}

// One panel at a time: its weights are one sequential stream (several panels at once, several
// streams, measured 20-30% slower from memory on Zen 4). Decode: one row, the two nibble chains;
// prefill: up to eight rows, each unpacked weight vector serving every row.
void a8w4_tile(const uint8_t* w, const float* scales, int64_t K, int64_t G, int panels,
               const int8_t* xq, int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, int rows,
               float* acc, int64_t acc_rs) {
  const int64_t panel_bytes = K * 8, panel_scales = K / G * kA8W4Panel;
  for (int p = 0; p < panels; ++p) {
    qrows::with_rows8(rows, [&](auto r) {
      a8w4_t<decltype(r)::value, 1>(w + p * panel_bytes, scales + p * panel_scales, K, G, xq, xq_rs,
                                    xoff, xoff_rs, acc + p * kA8W4Panel, acc_rs);
    });
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

}  // namespace

extern const QLinearKernels kTable = {
    "avx512-vnni", q8w_rows, q4w_rows, qscalar::q8w_dequant, qscalar::q4w_dequant, a8_quantize_row,
    a8w4_tile,     8,        1,        qscalar::int8_tile};

}  // namespace pteron::opt::qavx512
