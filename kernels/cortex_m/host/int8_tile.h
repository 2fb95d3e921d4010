// The inner loop of the host's int8 convolution (conv_host.cpp): up to kTileRows im2col rows
// times one block of kBlockChannels filters, accumulated in int32 over all of K with the CPU's
// 8-bit dot-product instruction, then requantised, offset, clamped and stored as int8, exactly
// as the scalar reference (util/requantize.h) does it. One definition per instruction set.
#pragma once

#include <cstdint>

namespace pteron::cortex_m::host {

constexpr int kTileRows = 8;
constexpr int kBlockChannels = 32;

// Packed weights of one block: for k-group g (k = 4g .. 4g + 3) and channel c of the block,
// byte 4c + i of the group's 128 bytes holds w[c][4g + i] (zero past K and past the last
// channel). Rows hold x + 128 as unsigned bytes (x ^ 0x80), so a dot product of 4 bytes is
// exactly what `vpdpbusd` (unsigned x signed) adds; the per-channel `corr` puts back the
// offsets: bias + (input_offset - 128) * sum(w).
struct Int8Tile {
  const uint8_t* rows;  // `row_count` rows, `row_stride` bytes apart, 4 * kgroups bytes read
  int64_t row_stride;
  int row_count;          // 1 .. kTileRows
  const int8_t* weights;  // the block: kgroups * 128 bytes
  int64_t kgroups;
  // Per channel of the block (kBlockChannels each): corr as above, the Q31 multiplier, and the
  // requantisation shift split into its left (>= 0) and right (>= 0) parts.
  const int32_t* corr;
  const int32_t* mult;
  const int32_t* left;
  const int32_t* right;
  int channels;  // channels of the block to store (1 .. kBlockChannels)
  int8_t* out;   // row r's channel c at out[r * out_stride + c]
  int64_t out_stride;
  int32_t out_off, act_min, act_max;
};

#if defined(__x86_64__)
// AVX-512 BW + VL + VNNI: 8 rows x 32 channels in 16 registers, `vpdpbusd` per row and half.
void int8_tile_avx512vnni(const Int8Tile& t);
#endif

}  // namespace pteron::cortex_m::host
