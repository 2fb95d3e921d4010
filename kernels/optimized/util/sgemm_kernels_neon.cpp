// aarch64: NEON's 8 x 12 micro-kernel (sgemm_lane_kernel.h) on vfmaq_laneq_f32. Advanced SIMD is
// part of every aarch64 CPU, so no run-time check is needed.
#include "kernels/optimized/util/sgemm_kernels.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include "kernels/optimized/util/sgemm_lane_kernel.h"
#endif

namespace pteron::optimized {

#if defined(__aarch64__)
namespace {

struct NeonVec {
  using vec = float32x4_t;
  static vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, vec v) { vst1q_f32(p, v); }
  static vec zero() { return vdupq_n_f32(0.0f); }
  static vec dup(float x) { return vdupq_n_f32(x); }
  static vec add(vec x, vec y) { return vaddq_f32(x, y); }
  static vec mul(vec x, vec y) { return vmulq_f32(x, y); }
  static vec clamp(vec v, vec lo, vec hi) {
    return vminq_f32(vmaxq_f32(v, lo), hi);
  }  // NaN in, NaN out
  template <int lane>
  static vec fma_lane(vec acc, vec b, vec a) {
    return vfmaq_laneq_f32(acc, b, a, lane);
  }
};

void neon_ukernel(int mr, int nr, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                  float alpha, bool load_c, const float* bias, const float* row_bias,
                  const float* clamp) {
  lane_kernel_8x12<NeonVec>(mr, nr, kc, a, b, c, ldc, alpha, load_c, bias, row_bias, clamp);
}

// Four rows at a time, each with two 4-lane accumulators, so loads of x are shared.
void neon_gemv_rows(int64_t n, int64_t k, const float* x, const float* w, int64_t ldw, float* y,
                    float alpha, float beta, const float* bias) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    float32x4_t acc[4][2];
    for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
      const float32x4_t x0 = vld1q_f32(x + p), x1 = vld1q_f32(x + p + 4);
      for (int r = 0; r < 4; ++r) {
        const float* row = w + (j + r) * ldw + p;
        acc[r][0] = vfmaq_f32(acc[r][0], x0, vld1q_f32(row));
        acc[r][1] = vfmaq_f32(acc[r][1], x1, vld1q_f32(row + 4));
      }
    }
    for (int r = 0; r < 4; ++r) {
      float sum = vaddvq_f32(vaddq_f32(acc[r][0], acc[r][1]));
      const float* row = w + (j + r) * ldw;
      for (int64_t q = p; q < k; ++q) sum += x[q] * row[q];
      float v = alpha * sum;
      if (beta != 0.0f) v += beta * y[j + r];
      if (bias != nullptr) v += bias[j + r];
      y[j + r] = v;
    }
  }
  if (j < n)
    sgemv_rows_generic(n - j, k, x, w + j * ldw, ldw, y + j, alpha, beta,
                       bias != nullptr ? bias + j : nullptr);
}

bool always() { return true; }

}  // namespace
#endif

const SgemmKernel* sgemm_neon_kernel() {
#if defined(__aarch64__)
  static const SgemmKernel k{
      "neon",          kLaneMR, kLaneNR, &neon_ukernel, &sgemm_pack_transposed_generic,
      &neon_gemv_rows, &always};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace pteron::optimized
