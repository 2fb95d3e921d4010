// int8_tile for AVX-512 (F, BW, VL, VNNI); compiled with those flags and called only on CPUs
// that have them (conv_host.cpp asks).
#include <immintrin.h>

#include <cstring>

#include "kernels/cortex_m/host/int8_tile.h"
#include "kernels/cortex_m/host/int8_tile_epilogue.h"
#include "kernels/cortex_m/host/vec_avx512.h"

namespace pteron::cortex_m::host {
namespace {

// Row r's four bytes of k-group g, broadcast to every lane.
inline __m512i broadcast4(const uint8_t* row, int64_t g) {
  int32_t four;
  std::memcpy(&four, row + 4 * g, 4);
  return _mm512_set1_epi32(four);
}

template <int MR>
void tile(const Int8Tile& t) {
  // Named accumulators, not an array: GCC 12 kept an array's elements moving between registers
  // (and spilled some) in the loop, twice the instructions of the dot products themselves.
  const __m512i zero = _mm512_setzero_si512();
  __m512i a0 = zero, b0 = zero, a1 = zero, b1 = zero, a2 = zero, b2 = zero, a3 = zero, b3 = zero;
  __m512i a4 = zero, b4 = zero, a5 = zero, b5 = zero, a6 = zero, b6 = zero, a7 = zero, b7 = zero;
  const int64_t s = t.row_stride;
  const uint8_t *r0 = static_cast<const uint8_t*>(t.rows), *r1 = r0 + s, *r2 = r1 + s, *r3 = r2 + s,
                *r4 = r3 + s, *r5 = r4 + s, *r6 = r5 + s, *r7 = r6 + s;
  const int8_t* w = static_cast<const int8_t*>(t.weights);
  for (int64_t g = 0; g < t.kgroups; ++g, w += 128) {
    const __m512i w0 = _mm512_loadu_si512(w);
    const __m512i w1 = _mm512_loadu_si512(w + 64);
#define PTERON_TILE_ROW(i)                   \
  if constexpr (MR > i) {                    \
    const __m512i x = broadcast4(r##i, g);   \
    a##i = _mm512_dpbusd_epi32(a##i, x, w0); \
    b##i = _mm512_dpbusd_epi32(b##i, x, w1); \
  }
    PTERON_TILE_ROW(0)
    PTERON_TILE_ROW(1)
    PTERON_TILE_ROW(2)
    PTERON_TILE_ROW(3) PTERON_TILE_ROW(4) PTERON_TILE_ROW(5) PTERON_TILE_ROW(6) PTERON_TILE_ROW(7)
#undef PTERON_TILE_ROW
  }
  const __m512i acc[8][2] = {{a0, b0}, {a1, b1}, {a2, b2}, {a3, b3},
                             {a4, b4}, {a5, b5}, {a6, b6}, {a7, b7}};
  finish_tile<Avx512, MR>(t, acc);
}

template <int MR>
struct Tile {
  static void run(const Int8Tile& t) { tile<MR>(t); }
};

}  // namespace

void int8_tile_avx512vnni(const Int8Tile& t) { run_rows<Tile, 8>(t); }

}  // namespace pteron::cortex_m::host
