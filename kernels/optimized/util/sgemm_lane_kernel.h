// The 8 x 12 micro-kernel of 128-bit vector machines (NEON's 32 registers: 24 accumulators,
// 2 for A, 3 for B), written once over a small vector interface `V` so that the NEON build and
// the generic-vector build (GCC/Clang vector extensions, which run and are tested on any host)
// share every line but the primitives. Per K step it loads 8 A values as two vectors and
// multiplies each B vector by one lane of them (vfmaq_laneq_f32 on NEON).
//
// V provides: type vec (4 floats); load(const float*) and store(float*, vec) at any alignment;
// zero(); dup(float); add, mul; clamp(v, lo, hi) = min(max(v, lo), hi) keeping NaN;
// template <int lane> fma_lane(acc, b, a) = acc + b * a[lane].
#pragma once

#include <cstdint>

#include "kernels/optimized/util/sgemm_kernels.h"

namespace pteron::optimized {

constexpr int kLaneMR = 8, kLaneNR = 12;

template <typename V>
inline void lane_kernel_8x12(int mr, int nr, int64_t kc, const float* a, const float* b, float* c,
                             int64_t ldc, float alpha, bool load_c, const float* bias,
                             const float* row_bias, const float* clamp) {
  using vec = typename V::vec;
  vec acc[kLaneMR][3];
#pragma GCC unroll 8
  for (int i = 0; i < kLaneMR; ++i) acc[i][0] = acc[i][1] = acc[i][2] = V::zero();
  for (int64_t k = 0; k < kc; ++k) {
    const vec a0 = V::load(a), a1 = V::load(a + 4);
    const vec b0 = V::load(b), b1 = V::load(b + 4), b2 = V::load(b + 8);
#define PTERON_LANE_ROW(row, av, lane)                           \
  acc[row][0] = V::template fma_lane<lane>(acc[row][0], b0, av); \
  acc[row][1] = V::template fma_lane<lane>(acc[row][1], b1, av); \
  acc[row][2] = V::template fma_lane<lane>(acc[row][2], b2, av);
    PTERON_LANE_ROW(0, a0, 0)
    PTERON_LANE_ROW(1, a0, 1)
    PTERON_LANE_ROW(2, a0, 2)
    PTERON_LANE_ROW(3, a0, 3)
    PTERON_LANE_ROW(4, a1, 0)
    PTERON_LANE_ROW(5, a1, 1)
    PTERON_LANE_ROW(6, a1, 2)
    PTERON_LANE_ROW(7, a1, 3)
#undef PTERON_LANE_ROW
    a += kLaneMR;
    b += kLaneNR;
  }
  if (mr == kLaneMR && nr == kLaneNR) {
    const vec valpha = V::dup(alpha);
    const vec lo = V::dup(clamp != nullptr ? clamp[0] : 0.0f);
    const vec hi = V::dup(clamp != nullptr ? clamp[1] : 0.0f);
#pragma GCC unroll 8
    for (int i = 0; i < kLaneMR; ++i) {
      float* row = c + i * ldc;
#pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) {
        vec v = acc[i][j];
        if (alpha != 1.0f) v = V::mul(v, valpha);
        if (load_c) v = V::add(v, V::load(row + 4 * j));
        if (bias != nullptr) v = V::add(v, V::load(bias + 4 * j));
        if (row_bias != nullptr) v = V::add(v, V::dup(row_bias[i]));
        if (clamp != nullptr) v = V::clamp(v, lo, hi);
        V::store(row + 4 * j, v);
      }
    }
    return;
  }
  float tile[kLaneMR * kLaneNR];
  // Unrolled like the loops above: indexing the accumulators at run time would make GCC keep
  // them in memory for the whole k loop (it did in the AVX2 tile: 2.1x slower).
#pragma GCC unroll 8
  for (int i = 0; i < kLaneMR; ++i)
#pragma GCC unroll 3
    for (int j = 0; j < 3; ++j) V::store(tile + i * kLaneNR + 4 * j, acc[i][j]);
  sgemm_store_tile(tile, kLaneNR, mr, nr, c, ldc, alpha, load_c, bias, row_bias, clamp);
}

}  // namespace pteron::optimized
