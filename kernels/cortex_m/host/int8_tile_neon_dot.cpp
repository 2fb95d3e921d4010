// int8_tile for aarch64 with the dot-product extension (kNeonDotLayout in int8_tile.h): rows of
// signed bytes, 16 of each row loaded at a time and used by lane (`sdot` by element), 16
// channels of 4-byte groups. Compiled with -march=armv8.2-a+dotprod and called only on CPUs
// that have it (conv_host.cpp asks).
#include <arm_neon.h>

#include <cstring>

#include "kernels/cortex_m/host/int8_tile.h"
#include "kernels/cortex_m/host/int8_tile_epilogue.h"
#include "kernels/cortex_m/host/vec_neon.h"

namespace pteron::cortex_m::host {
namespace {

template <int MR>
void tile(const Int8Tile& t) {
  // Named accumulators, 4 rows x 4 quarters of 4 channels: all but 16 of the 32 q registers.
  const int32x4_t zero = vdupq_n_s32(0);
  int32x4_t a00 = zero, a01 = zero, a02 = zero, a03 = zero, a10 = zero, a11 = zero, a12 = zero,
            a13 = zero, a20 = zero, a21 = zero, a22 = zero, a23 = zero, a30 = zero, a31 = zero,
            a32 = zero, a33 = zero;
  const int64_t s = t.row_stride;
  const int8_t *r0 = static_cast<const int8_t*>(t.rows), *r1 = r0 + s, *r2 = r1 + s, *r3 = r2 + s;
  const int8_t* w = static_cast<const int8_t*>(t.weights);
  for (int64_t g = 0; g < t.kgroups; g += 4) {
    int8x16_t x0 = vdupq_n_s8(0), x1 = x0, x2 = x0, x3 = x0;
    x0 = vld1q_s8(r0 + 4 * g);
    if constexpr (MR > 1) x1 = vld1q_s8(r1 + 4 * g);
    if constexpr (MR > 2) x2 = vld1q_s8(r2 + 4 * g);
    if constexpr (MR > 3) x3 = vld1q_s8(r3 + 4 * g);
#define PTERON_TILE_ROW(i, j)                        \
  if constexpr (MR > i) {                            \
    a##i##0 = vdotq_laneq_s32(a##i##0, w0, x##i, j); \
    a##i##1 = vdotq_laneq_s32(a##i##1, w1, x##i, j); \
    a##i##2 = vdotq_laneq_s32(a##i##2, w2, x##i, j); \
    a##i##3 = vdotq_laneq_s32(a##i##3, w3, x##i, j); \
  }
#define PTERON_TILE_GROUP(j)                                                                \
  {                                                                                         \
    const int8x16_t w0 = vld1q_s8(w), w1 = vld1q_s8(w + 16), w2 = vld1q_s8(w + 32),         \
                    w3 = vld1q_s8(w + 48);                                                  \
    w += 64;                                                                                \
    PTERON_TILE_ROW(0, j) PTERON_TILE_ROW(1, j) PTERON_TILE_ROW(2, j) PTERON_TILE_ROW(3, j) \
  }
    PTERON_TILE_GROUP(0) PTERON_TILE_GROUP(1) PTERON_TILE_GROUP(2) PTERON_TILE_GROUP(3)
#undef PTERON_TILE_GROUP
#undef PTERON_TILE_ROW
  }
  const int32x4_t acc[4][4] = {
      {a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23}, {a30, a31, a32, a33}};
  finish_tile<Neon, MR>(t, acc);
}

template <int MR>
struct Tile {
  static void run(const Int8Tile& t) { tile<MR>(t); }
};

}  // namespace

void int8_tile_neon_dot(const Int8Tile& t) { run_rows<Tile, 4>(t); }

}  // namespace pteron::cortex_m::host
