// What every convolution tile (int8_tile_*.cpp) shares, written once over the ISA's vector type
// (vec_*.h): its end (per part of V::kLanes channels, each row's accumulators plus `corr`
// requantised, offset, clamped and stored as int8, the last part only up to t.channels) and the
// dispatch on its row count.
#pragma once

#include "kernels/cortex_m/host/int8_tile.h"

namespace pteron::cortex_m::host {

template <class V, int MR, int Rows, int Parts>
void finish_tile(const Int8Tile& t, const typename V::I32 (&acc)[Rows][Parts]) {
  static_assert(MR <= Rows);
  const auto out_off = V::set1(t.out_off), lo = V::set1(t.act_min), hi = V::set1(t.act_max);
  for (int part = 0; part < Parts; ++part) {
    const int c0 = part * static_cast<int>(V::kLanes);
    if (t.channels <= c0) break;
    const auto corr = V::load_i32(t.corr + c0, V::kLanes),
               mult = V::load_i32(t.mult + c0, V::kLanes);
    const auto left = V::load_i32(t.left + c0, V::kLanes),
               right = V::load_i32(t.right + c0, V::kLanes);
    for (int r = 0; r < MR; ++r) {
      const auto q = V::requantize(V::add(acc[r][part], corr), mult, left, right);
      V::store_i8(t.out + r * t.out_stride + c0, q, out_off, lo, hi, t.channels - c0);
    }
  }
}

// Runs Tile<t.row_count>::run(t) for a row count of 1 .. MaxRows: each row count is its own
// instantiation, so the accumulators of the rows a tile has are registers.
template <template <int> class Tile, int MaxRows>
void run_rows(const Int8Tile& t) {
  if constexpr (MaxRows > 1) {
    if (t.row_count < MaxRows) return run_rows<Tile, MaxRows - 1>(t);
  }
  Tile<MaxRows>::run(t);
}

}  // namespace pteron::cortex_m::host
