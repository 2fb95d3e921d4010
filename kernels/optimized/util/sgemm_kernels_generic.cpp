// Micro-kernels in portable C++: a scalar one for any compiler and target, and NEON's 8 x 12 tile
// on GCC/Clang generic vectors, which every host runs (so NEON's blocking and lane order are
// tested on x86 too, not only under emulation).
#include <cstring>

#include "kernels/optimized/util/sgemm_kernels.h"
#include "kernels/optimized/util/sgemm_lane_kernel.h"

namespace pteron::optimized {
namespace {

bool always() { return true; }

constexpr int kScalarMR = 4, kScalarNR = 8;

void scalar_ukernel(int mr, int nr, int64_t kc, const float* a, const float* b, float* c,
                    int64_t ldc, float alpha, bool load_c, const float* bias, const float* row_bias,
                    const float* clamp) {
  float acc[kScalarMR * kScalarNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int i = 0; i < kScalarMR; ++i)
      for (int j = 0; j < kScalarNR; ++j) acc[i * kScalarNR + j] += a[i] * b[j];
    a += kScalarMR;
    b += kScalarNR;
  }
  sgemm_store_tile(acc, kScalarNR, mr, nr, c, ldc, alpha, load_c, bias, row_bias, clamp);
}

#if defined(__GNUC__)
#define PTERON_HAVE_VEC128 1
struct GenericVec {
  typedef float vec __attribute__((vector_size(16)));
  static vec load(const float* p) {
    vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }
  static vec zero() { return vec{0, 0, 0, 0}; }
  static vec dup(float x) { return vec{x, x, x, x}; }
  static vec add(vec x, vec y) { return x + y; }
  static vec mul(vec x, vec y) { return x * y; }
  static vec clamp(vec v, vec lo, vec hi) {  // one-sided selects: NaN lanes compare false, stay
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  }
  template <int lane>
  static vec fma_lane(vec acc, vec b, vec a) {
    return acc + b * a[lane];
  }
};

void vec128_ukernel(int mr, int nr, int64_t kc, const float* a, const float* b, float* c,
                    int64_t ldc, float alpha, bool load_c, const float* bias, const float* row_bias,
                    const float* clamp) {
  lane_kernel_8x12<GenericVec>(mr, nr, kc, a, b, c, ldc, alpha, load_c, bias, row_bias, clamp);
}
#endif

}  // namespace

void sgemm_pack_transposed_generic(const float* src, int64_t ld, int64_t kc, int nr, int NR,
                                   float* dst) {
  // Blocks of 8 steps keep the reads of every column sequential and the writes within a few
  // cache lines.
  constexpr int64_t kBlock = 8;
  for (int64_t k0 = 0; k0 < kc; k0 += kBlock) {
    const int64_t kb = kc - k0 < kBlock ? kc - k0 : kBlock;
    for (int j = 0; j < nr; ++j) {
      const float* col = src + j * ld + k0;
      for (int64_t k = 0; k < kb; ++k) dst[(k0 + k) * NR + j] = col[k];
    }
    for (int j = nr; j < NR; ++j)
      for (int64_t k = 0; k < kb; ++k) dst[(k0 + k) * NR + j] = 0.0f;
  }
}

void sgemv_rows_generic(int64_t n, int64_t k, const float* x, const float* w, int64_t ldw, float* y,
                        float alpha, float beta, const float* bias) {
  constexpr int kLanes = 8;  // independent partial sums the compiler can vectorise
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * ldw;
    float lanes[kLanes] = {};
    int64_t p = 0;
    for (; p + kLanes <= k; p += kLanes)
      for (int l = 0; l < kLanes; ++l) lanes[l] += x[p + l] * row[p + l];
    float sum = 0.0f;
    for (; p < k; ++p) sum += x[p] * row[p];
    for (int l = 0; l < kLanes; ++l) sum += lanes[l];
    float v = alpha * sum;
    if (beta != 0.0f) v += beta * y[j];
    if (bias != nullptr) v += bias[j];
    y[j] = v;
  }
}

const SgemmKernel* sgemm_scalar_kernel() {
  static const SgemmKernel k{"scalar",
                             kScalarMR,
                             kScalarNR,
                             &scalar_ukernel,
                             &sgemm_pack_transposed_generic,
                             &sgemv_rows_generic,
                             &always};
  return &k;
}

const SgemmKernel* sgemm_vec128_kernel() {
#if defined(PTERON_HAVE_VEC128)
  static const SgemmKernel k{"vec128",
                             kLaneMR,
                             kLaneNR,
                             &vec128_ukernel,
                             &sgemm_pack_transposed_generic,
                             &sgemv_rows_generic,
                             &always};
  return &k;
#else
  return nullptr;
#endif
}

}  // namespace pteron::optimized
