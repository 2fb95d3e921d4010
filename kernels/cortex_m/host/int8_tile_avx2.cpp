// int8_tile for AVX2 (kAvx2Layout in int8_tile.h): rows of int16 x + input_offset, filters in
// int16 pairs, `vpmaddwd` sums each pair exactly (|(x + input_offset) * w| <= 255 * 128).
// Compiled with -mavx2 and called only on CPUs that have it (conv_host.cpp asks).
#include <immintrin.h>

#include <cstring>

#include "kernels/cortex_m/host/int8_tile.h"
#include "kernels/cortex_m/host/int8_tile_epilogue.h"
#include "kernels/cortex_m/host/vec_avx2.h"

namespace pteron::cortex_m::host {
namespace {

// Row r's int16 pair of k-group g, broadcast to every 32-bit lane.
inline __m256i broadcast_pair(const int16_t* row, int64_t g) {
  int32_t pair;
  std::memcpy(&pair, row + 2 * g, 4);
  return _mm256_set1_epi32(pair);
}

template <int MR>
void tile(const Int8Tile& t) {
  // Named accumulators (see int8_tile_avx512vnni.cpp): 12 of the 16 ymm registers.
  const __m256i zero = _mm256_setzero_si256();
  __m256i a0 = zero, b0 = zero, a1 = zero, b1 = zero, a2 = zero, b2 = zero;
  __m256i a3 = zero, b3 = zero, a4 = zero, b4 = zero, a5 = zero, b5 = zero;
  const int64_t s = t.row_stride / 2;
  const int16_t *r0 = static_cast<const int16_t*>(t.rows), *r1 = r0 + s, *r2 = r1 + s, *r3 = r2 + s,
                *r4 = r3 + s, *r5 = r4 + s;
  const int16_t* w = static_cast<const int16_t*>(t.weights);
  for (int64_t g = 0; g < t.kgroups; ++g, w += 32) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16));
#define PTERON_TILE_ROW(i)                                   \
  if constexpr (MR > i) {                                    \
    const __m256i x = broadcast_pair(r##i, g);               \
    a##i = _mm256_add_epi32(a##i, _mm256_madd_epi16(x, w0)); \
    b##i = _mm256_add_epi32(b##i, _mm256_madd_epi16(x, w1)); \
  }
    PTERON_TILE_ROW(0)
    PTERON_TILE_ROW(1) PTERON_TILE_ROW(2) PTERON_TILE_ROW(3) PTERON_TILE_ROW(4) PTERON_TILE_ROW(5)
#undef PTERON_TILE_ROW
  }
  const __m256i acc[6][2] = {{a0, b0}, {a1, b1}, {a2, b2}, {a3, b3}, {a4, b4}, {a5, b5}};
  finish_tile<Avx2, MR>(t, acc);
}

template <int MR>
struct Tile {
  static void run(const Int8Tile& t) { tile<MR>(t); }
};

}  // namespace

void int8_tile_avx2(const Int8Tile& t) { run_rows<Tile, 6>(t); }

}  // namespace pteron::cortex_m::host
