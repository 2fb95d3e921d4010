// x86-64 micro-kernels: AVX-512F (12 x 32: 24 zmm accumulators, masked edges) and AVX2 + FMA
// (6 x 16: 12 ymm accumulators). Compiled with function target attributes rather than -m flags,
// so a baseline x86-64 build carries them and picks one at run time.
#include "kernels/optimized/util/sgemm_kernels.h"
#include "runtime/platform/cpu_isa.h"

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define PTERON_SGEMM_X86 1
#include <immintrin.h>
// GCC 12's AVX-512 headers build "undefined" vectors by self-assignment, which
// -Wmaybe-uninitialized reports wherever they inline (masked loads, shuffles, reductions).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pteron::optimized {

#if defined(PTERON_SGEMM_X86)
namespace {

#define PTERON_AVX512 __attribute__((target("avx512f")))
#define PTERON_AVX2 __attribute__((target("avx2,fma")))

// ---------------------------------------------------------------------------------------- AVX-512
constexpr int kAvx512MR = 12, kAvx512NR = 32;

template <int MR>
PTERON_AVX512 void avx512_tile(int nr, int64_t kc, const float* a, const float* b, float* c,
                               int64_t ldc, float alpha, bool load_c, const float* bias,
                               const float* row_bias, const float* clamp) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kAvx512MR;
    b += kAvx512NR;
  }
  const __mmask16 m0 = nr >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << nr) - 1);
  const __mmask16 m1 = nr >= 32  ? 0xFFFF
                       : nr > 16 ? static_cast<__mmask16>((1u << (nr - 16)) - 1)
                                 : 0;
  const __m512 valpha = _mm512_set1_ps(alpha);
  const __m512 vlo = _mm512_set1_ps(clamp != nullptr ? clamp[0] : 0.0f);
  const __m512 vhi = _mm512_set1_ps(clamp != nullptr ? clamp[1] : 0.0f);
  __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
  if (bias != nullptr) {
    bias0 = _mm512_maskz_loadu_ps(m0, bias);
    bias1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m512 v0 = acc0[i], v1 = acc1[i];
    if (alpha != 1.0f) {
      v0 = _mm512_mul_ps(v0, valpha);
      v1 = _mm512_mul_ps(v1, valpha);
    }
    if (load_c) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, row));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, row + 16));
    }
    if (bias != nullptr) {
      v0 = _mm512_add_ps(v0, bias0);
      v1 = _mm512_add_ps(v1, bias1);
    }
    if (row_bias != nullptr) {
      const __m512 rb = _mm512_set1_ps(row_bias[i]);
      v0 = _mm512_add_ps(v0, rb);
      v1 = _mm512_add_ps(v1, rb);
    }
    if (clamp != nullptr) {  // v second: max/min return it when it is NaN
      v0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v0));
      v1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v1));
    }
    _mm512_mask_storeu_ps(row, m0, v0);
    _mm512_mask_storeu_ps(row + 16, m1, v1);
  }
}

// One instantiation per row count, so edge tiles compute only the rows they store.
void avx512_ukernel(int mr, int nr, int64_t kc, const float* a, const float* b, float* c,
                    int64_t ldc, float alpha, bool load_c, const float* bias, const float* row_bias,
                    const float* clamp) {
  switch (mr) {
#define PTERON_CASE(n) \
  case n:              \
    return avx512_tile<n>(nr, kc, a, b, c, ldc, alpha, load_c, bias, row_bias, clamp);
    PTERON_CASE(1)
    PTERON_CASE(2)
    PTERON_CASE(3)
    PTERON_CASE(4)
    PTERON_CASE(5)
    PTERON_CASE(6)
    PTERON_CASE(7)
    PTERON_CASE(8)
    PTERON_CASE(9)
    PTERON_CASE(10)
    PTERON_CASE(11)
    PTERON_CASE(12)
#undef PTERON_CASE
    default:
      return;
  }
}

// Transposes 16 rows of 16 floats (r[i] = row i) in registers: r[j] becomes column j.
PTERON_AVX512 inline void transpose16x16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // rows g..g+3: u[g + q] holds their element 4L + q per lane
    u[g + 0] = _mm512_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {
    const __m512 v = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88);
    const __m512 w = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xdd);
    const __m512 x = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88);
    const __m512 y = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xdd);
    r[q] = _mm512_shuffle_f32x4(v, x, 0x88);
    r[8 + q] = _mm512_shuffle_f32x4(v, x, 0xdd);
    r[4 + q] = _mm512_shuffle_f32x4(w, y, 0x88);
    r[12 + q] = _mm512_shuffle_f32x4(w, y, 0xdd);
  }
}

// Linear weights [N, K] (and row-major A) into K-major panels, 16 x 16 blocks transposed in
// registers; a last group of fewer than 16 rows repeats its last row into the missing ones and
// stores only the real lanes. The k tail goes element by element.
PTERON_AVX512 void avx512_pack_transposed(const float* src, int64_t ld, int64_t kc, int nr, int NR,
                                          float* dst) {
  const int64_t full_k = kc / 16 * 16;
  for (int j0 = 0; j0 < nr; j0 += 16) {
    const int rows = nr - j0 < 16 ? nr - j0 : 16;
    const __mmask16 lanes = rows == 16 ? 0xFFFF : static_cast<__mmask16>((1u << rows) - 1);
    const float* row[16];
    for (int i = 0; i < 16; ++i)
      row[i] = src + static_cast<int64_t>(j0 + (i < rows ? i : rows - 1)) * ld;
    for (int64_t k0 = 0; k0 < full_k; k0 += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(row[i] + k0);
      transpose16x16(r);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) _mm512_mask_storeu_ps(dst + (k0 + i) * NR + j0, lanes, r[i]);
    }
    for (int64_t k = full_k; k < kc; ++k)
      for (int j = 0; j < rows; ++j) dst[k * NR + j0 + j] = row[j][k];
  }
  for (int64_t k = 0; k < kc; ++k)
    for (int j = nr; j < NR; ++j) dst[k * NR + j] = 0.0f;
}

// One weight row at a time, four accumulators: each row is one sequential stream (four rows
// at once, four interleaved streams, measured ~25% slower from memory on Zen 4; decode is
// bound by that stream). Masked tail along k.
PTERON_AVX512 void avx512_gemv_rows(int64_t n, int64_t k, const float* x, const float* w,
                                    int64_t ldw, float* y, float alpha, float beta,
                                    const float* bias) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t p = 0;
    for (; p + 64 <= k; p += 64) {
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p), _mm512_loadu_ps(row + p), a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p + 16), _mm512_loadu_ps(row + p + 16), a1);
      a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p + 32), _mm512_loadu_ps(row + p + 32), a2);
      a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p + 48), _mm512_loadu_ps(row + p + 48), a3);
    }
    for (; p + 16 <= k; p += 16)
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p), _mm512_loadu_ps(row + p), a0);
    if (p < k) {
      const __mmask16 tail = static_cast<__mmask16>((1u << (k - p)) - 1);
      a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, x + p), _mm512_maskz_loadu_ps(tail, row + p),
                           a1);
    }
    float v =
        alpha * _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    if (beta != 0.0f) v += beta * y[j];
    if (bias != nullptr) v += bias[j];
    y[j] = v;
  }
}

bool avx512_supported() { return x86_level_allowed() >= X86Level::Avx512; }

// ------------------------------------------------------------------------------------------- AVX2
constexpr int kAvx2MR = 6, kAvx2NR = 16;

template <int MR>
PTERON_AVX2 void avx2_tile(int nr, int64_t kc, const float* a, const float* b, float* c,
                           int64_t ldc, float alpha, bool load_c, const float* bias,
                           const float* row_bias, const float* clamp) {
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kAvx2MR;
    b += kAvx2NR;
  }
  if (nr == kAvx2NR) {
    const __m256 valpha = _mm256_set1_ps(alpha);
    const __m256 vlo = _mm256_set1_ps(clamp != nullptr ? clamp[0] : 0.0f);
    const __m256 vhi = _mm256_set1_ps(clamp != nullptr ? clamp[1] : 0.0f);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      float* row = c + i * ldc;
      __m256 v0 = acc0[i], v1 = acc1[i];
      if (alpha != 1.0f) {
        v0 = _mm256_mul_ps(v0, valpha);
        v1 = _mm256_mul_ps(v1, valpha);
      }
      if (load_c) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
      }
      if (bias != nullptr) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(bias));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(bias + 8));
      }
      if (row_bias != nullptr) {
        const __m256 rb = _mm256_set1_ps(row_bias[i]);
        v0 = _mm256_add_ps(v0, rb);
        v1 = _mm256_add_ps(v1, rb);
      }
      if (clamp != nullptr) {  // v second: max/min return it when it is NaN
        v0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, v0));
        v1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, v1));
      }
      _mm256_storeu_ps(row, v0);
      _mm256_storeu_ps(row + 8, v1);
    }
    return;
  }
  float tile[MR * kAvx2NR];
  // Unrolled like the loops above: a loop indexing the accumulators at run time makes GCC keep
  // them in memory, and the k loop then stores all twelve to the stack on every step (measured:
  // 2.2x slower than the AVX-512 tile on a Zen 4 core, where both have the same FMA throughput).
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_ps(tile + i * kAvx2NR, acc0[i]);
    _mm256_storeu_ps(tile + i * kAvx2NR + 8, acc1[i]);
  }
  sgemm_store_tile(tile, kAvx2NR, MR, nr, c, ldc, alpha, load_c, bias, row_bias, clamp);
}

void avx2_ukernel(int mr, int nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                  float alpha, bool load_c, const float* bias, const float* row_bias,
                  const float* clamp) {
  switch (mr) {
#define PTERON_CASE(n) \
  case n:              \
    return avx2_tile<n>(nr, kc, a, b, c, ldc, alpha, load_c, bias, row_bias, clamp);
    PTERON_CASE(1)
    PTERON_CASE(2)
    PTERON_CASE(3)
    PTERON_CASE(4)
    PTERON_CASE(5)
    PTERON_CASE(6)
#undef PTERON_CASE
    default:
      return;
  }
}

PTERON_AVX2 inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// One weight row at a time, four accumulators (one sequential stream per row, as AVX-512's).
PTERON_AVX2 void avx2_gemv_rows(int64_t n, int64_t k, const float* x, const float* w, int64_t ldw,
                                float* y, float alpha, float beta, const float* bias) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(row + p), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 8), _mm256_loadu_ps(row + p + 8), a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 16), _mm256_loadu_ps(row + p + 16), a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p + 24), _mm256_loadu_ps(row + p + 24), a3);
    }
    for (; p + 8 <= k; p += 8)
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(row + p), a0);
    float sum = hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; p < k; ++p) sum += x[p] * row[p];
    float v = alpha * sum;
    if (beta != 0.0f) v += beta * y[j];
    if (bias != nullptr) v += bias[j];
    y[j] = v;
  }
}

bool avx2_supported() { return x86_level_allowed() >= X86Level::Avx2; }

}  // namespace
#endif

const SgemmKernel* sgemm_avx2_kernel() {
#if defined(PTERON_SGEMM_X86)
  static const SgemmKernel k{
      "avx2",          kAvx2MR,        kAvx2NR, &avx2_ukernel, &sgemm_pack_transposed_generic,
      &avx2_gemv_rows, &avx2_supported};
  return &k;
#else
  return nullptr;
#endif
}

const SgemmKernel* sgemm_avx512_kernel() {
#if defined(PTERON_SGEMM_X86)
  static const SgemmKernel k{
      "avx512",          kAvx512MR,        kAvx512NR, &avx512_ukernel, &avx512_pack_transposed,
      &avx512_gemv_rows, &avx512_supported};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace pteron::optimized
