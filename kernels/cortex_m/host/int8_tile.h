// The inner loop of the host's int8 convolution (conv_host.cpp): up to `rows` im2col rows times
// one block of filters, accumulated in int32 over all of K with the CPU's integer dot-product
// instruction, then requantised, offset, clamped and stored as int8, exactly as the scalar
// reference (util/requantize.h) does it. One definition per instruction set, each with its own
// layout of rows and packed filters (TileLayout).
#pragma once

#include <cstdint>

namespace pteron::cortex_m::host {

// How a tile reads its operands. For k-group g (k = group * g .. group * g + group - 1) and
// channel c of a block, the packed filters hold the group's weights of channel c together
// (zero past K and past the last channel), blocks one after another. Rows hold each tap's input
// channels in one of three forms, and the per-channel `corr` added to the accumulators puts
// the input offset back where the rows leave it out:
//   kUnsignedBytes: x + 128 as unsigned bytes (x ^ 0x80), padding taps -input_offset + 128,
//     corr = bias + (input_offset - 128) * sum(w)   (AVX-512 VNNI `vpdpbusd`: unsigned x signed)
//   kSignedBytes: x, padding taps -input_offset (in int8: the offset is in [-127, 128]),
//     corr = bias + input_offset * sum(w)           (NEON `sdot`: signed x signed)
//   kOffsetInt16: x + input_offset as int16, padding taps 0, corr = bias   (AVX2 `vpmaddwd`)
enum class RowFormat : uint8_t { kUnsignedBytes, kSignedBytes, kOffsetInt16 };

struct TileLayout {
  int rows;            // rows per tile call
  int block_channels;  // output channels per block
  int group;           // k values per group
  int group_multiple;  // groups per row rounded up to a multiple of this (zeros past K)
  RowFormat format;
  int element_bytes() const { return format == RowFormat::kOffsetInt16 ? 2 : 1; }
};

struct Int8Tile {
  const void* rows;  // `row_count` rows, `row_stride` bytes apart
  int64_t row_stride;
  int row_count;        // 1 .. layout rows
  const void* weights;  // the block: kgroups groups
  int64_t kgroups;
  // Per channel of the block (block_channels each): corr as above, the Q31 multiplier, and the
  // requantisation shift split into its left (>= 0) and right (>= 0) parts.
  const int32_t* corr;
  const int32_t* mult;
  const int32_t* left;
  const int32_t* right;
  int channels;  // channels of the block to store (1 .. block_channels)
  int8_t* out;   // row r's channel c at out[r * out_stride + c]
  int64_t out_stride;
  int32_t out_off, act_min, act_max;
};

#if defined(__x86_64__)
// 8 rows x 32 channels in 16 zmm accumulators, `vpdpbusd` per row and half.
constexpr TileLayout kAvx512VnniLayout{8, 32, 4, 1, RowFormat::kUnsignedBytes};
void int8_tile_avx512vnni(const Int8Tile& t);
// 6 rows x 16 channels in 12 ymm accumulators, `vpmaddwd` per row and half.
constexpr TileLayout kAvx2Layout{6, 16, 2, 1, RowFormat::kOffsetInt16};
void int8_tile_avx2(const Int8Tile& t);
#endif
#if defined(__aarch64__)
// 4 rows x 16 channels in 16 q accumulators: 16 bytes of each row at a time (4 groups), one
// `sdot` by element per row, group and 4 channels.
constexpr TileLayout kNeonDotLayout{4, 16, 4, 4, RowFormat::kSignedBytes};
void int8_tile_neon_dot(const Int8Tile& t);
#endif

}  // namespace pteron::cortex_m::host
