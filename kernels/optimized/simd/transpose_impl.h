// dst[j][i] = src[i][j] for float32 matrices (row strides in elements): 8x8 blocks in AVX
// registers (AVX2 and AVX-512 builds), 4x4 on NEON, element by element at the edges and on
// scalar builds. The Winograd convolution's NCHW <-> channel-minor copies (as plain loops they
// took 40% of a 56x56x64 layer). Included by isa_impl.h inside PTERON_ISA's namespace.
#pragma once

#if PTERON_VEC_AVX512 || PTERON_VEC_AVX2
constexpr int64_t kTransposeBlock = 8;
inline __attribute__((always_inline)) void transpose_block(const float* s, int64_t rs, float* d,
                                                           int64_t drs) {
  const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + rs),
               r2 = _mm256_loadu_ps(s + 2 * rs), r3 = _mm256_loadu_ps(s + 3 * rs),
               r4 = _mm256_loadu_ps(s + 4 * rs), r5 = _mm256_loadu_ps(s + 5 * rs),
               r6 = _mm256_loadu_ps(s + 6 * rs), r7 = _mm256_loadu_ps(s + 7 * rs);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
               t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
               t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + drs, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * drs, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * drs, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * drs, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * drs, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * drs, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * drs, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#elif PTERON_VEC_NEON
constexpr int64_t kTransposeBlock = 4;
inline __attribute__((always_inline)) void transpose_block(const float* s, int64_t rs, float* d,
                                                           int64_t drs) {
  const float32x4x2_t p01 = vtrnq_f32(vld1q_f32(s), vld1q_f32(s + rs));
  const float32x4x2_t p23 = vtrnq_f32(vld1q_f32(s + 2 * rs), vld1q_f32(s + 3 * rs));
  vst1q_f32(d, vcombine_f32(vget_low_f32(p01.val[0]), vget_low_f32(p23.val[0])));
  vst1q_f32(d + drs, vcombine_f32(vget_low_f32(p01.val[1]), vget_low_f32(p23.val[1])));
  vst1q_f32(d + 2 * drs, vcombine_f32(vget_high_f32(p01.val[0]), vget_high_f32(p23.val[0])));
  vst1q_f32(d + 3 * drs, vcombine_f32(vget_high_f32(p01.val[1]), vget_high_f32(p23.val[1])));
}
#else
constexpr int64_t kTransposeBlock = 1;
inline void transpose_block(const float* s, int64_t, float* d, int64_t) { *d = *s; }
#endif

void transpose(const float* src, int64_t src_rs, float* dst, int64_t dst_rs, int64_t rows,
               int64_t cols) {
  constexpr int64_t B = kTransposeBlock;
  int64_t i = 0;
  for (; i + B <= rows; i += B) {
    int64_t j = 0;
    for (; j + B <= cols; j += B)
      transpose_block(src + i * src_rs + j, src_rs, dst + j * dst_rs + i, dst_rs);
    for (; j < cols; ++j) {
      for (int64_t k = i; k < i + B; ++k) dst[j * dst_rs + k] = src[k * src_rs + j];
    }
  }
  for (; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[j * dst_rs + i] = src[i * src_rs + j];
  }
}
