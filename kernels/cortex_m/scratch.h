// Scratch bytes each Cortex-M kernel asks of ctx.allocate_scratch, as functions of shapes the
// compiler knows, so the memory plan can reserve the largest per program instead of anything
// being allocated at run time. Plain C++17 with no runtime dependencies: the compiler (C++20)
// includes this header too. The sizes are what the vector paths need (the scalar paths need
// none) plus alignment slack: the MVE paths' for a Cortex-M55 target, the DSP paths' (the *_dsp
// functions) for a Cortex-M4/M7 target; a kernel that gets less falls back to its scalar path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron::cortex_m {

constexpr size_t kScratchAlign = 16;

constexpr size_t align_scratch(size_t bytes) {
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}

// quantized_conv2d_nhwc's narrow-input MVE variants (op_quantized_conv2d.cpp), which hold a few
// output pixels' input in vector registers for every output channel: a 1x1 convolution (stride
// 1, no padding) of at most 16 input channels and an even number of output channels
// (requantised as it goes, two channels at a time), or of 17 to 32 input channels with
// at most 64 output channels; and a 3-row kernel whose rows (kw * cin bytes) plus the step
// between two output pixels (stride_w * cin bytes) fit one 16-byte vector (first layers: 3x3 on
// 1 to 3 channels, stride 1 or 2) with at most 64 output channels. The last two keep int32
// accumulators for a tile of pixels, which the output-channel limit keeps small.
constexpr int64_t kConv2dNarrowMaxCout = 64;

constexpr bool conv2d_narrow_pointwise(int64_t in_channels, int64_t out_channels, bool pointwise) {
  return pointwise &&
         (in_channels <= 16 ? out_channels % 2 == 0
                            : in_channels <= 32 && out_channels <= kConv2dNarrowMaxCout);
}

constexpr bool conv2d_narrow_rows(int64_t in_channels, int64_t kernel_h, int64_t kernel_w,
                                  int64_t out_channels, int64_t stride_w) {
  return kernel_h == 3 && (kernel_w + stride_w) * in_channels <= 16 &&
         out_channels <= kConv2dNarrowMaxCout;
}

// Output pixels per tile of the tiled narrow variants: a multiple of 12 (their blocks are 3
// and 4 pixels), at least 12, the int32 accumulators (out_channels per pixel) within 768 bytes for
// 1x1 convolutions (an early 1x1 often sets the model's peak RAM) and 1536 for the 3-row one.
constexpr int64_t conv2d_narrow_tile_pixels(int64_t out_channels, bool rows) {
  const int64_t t = (rows ? 1536 : 768) / (4 * out_channels) / 12 * 12;
  return t < 12 ? 12 : t;
}

// Bytes of the narrow variants' per-channel requantisation record: kernel sum plus bias,
// multiplier, right shift.
constexpr size_t kConv2dNarrowRecord = 12;

// Bytes of one padded input row the 3-row variant builds for blocks at the image's edges (three
// of them): four pixels' windows, (3 * stride_w + kw) * cin <= 46 bytes.
constexpr size_t kConv2dNarrowEdgeRow = 48;

// cortex_m::quantized_conv2d_nhwc: per output channel its kernel sum, multiplier and shifts (a
// record of eight int32) and, unless the convolution is 1x1 with stride 1 and no padding, four
// im2col columns of kh * kw * cin bytes; or, for the narrow variants, their records, a filter
// table (16 or 32 bytes a filter, or 2 x 16 bytes per kernel row) and the accumulator tile (and
// the 3-row variant's padded rows), whichever is more.
constexpr size_t quantized_conv2d_scratch_bytes(int64_t in_channels, int64_t kernel_h,
                                                int64_t kernel_w, int64_t out_channels,
                                                bool pointwise, int64_t stride_w) {
  const size_t sums = align_scratch(static_cast<size_t>(out_channels) * 8 * sizeof(int32_t));
  const size_t column =
      pointwise ? 0 : align_scratch(static_cast<size_t>(4 * kernel_h * kernel_w * in_channels));
  size_t narrow = 0;
  const bool narrow_pointwise = conv2d_narrow_pointwise(in_channels, out_channels, pointwise);
  if (narrow_pointwise ||
      conv2d_narrow_rows(in_channels, kernel_h, kernel_w, out_channels, stride_w)) {
    const size_t records = align_scratch(static_cast<size_t>(out_channels) * kConv2dNarrowRecord);
    const size_t tile = align_scratch(static_cast<size_t>(
        out_channels * conv2d_narrow_tile_pixels(out_channels, !narrow_pointwise) * 4));
    if (narrow_pointwise) {  // 16 or 32 input channels read the weights in place
      const int64_t filter = in_channels <= 16 ? 16 : 32;
      const size_t table =
          in_channels == filter ? 0 : align_scratch(static_cast<size_t>(out_channels * filter));
      narrow = records + (in_channels <= 16 ? 0 : tile) + table;
    } else {
      narrow = records + tile + align_scratch(static_cast<size_t>(out_channels * kernel_h) * 32) +
               align_scratch(3 * kConv2dNarrowEdgeRow);
    }
  }
  const size_t general = sums + column;
  return (narrow > general ? narrow : general) + 2 * kScratchAlign;
}

// quantized_conv2d_nhwc's DSP path (dsp/conv_dsp.cpp): four int16 columns of K = kh * kw * cin
// rounded up to a multiple of 4, interleaved (32 bytes per four bytes of K), a requantisation
// record per output channel (12 bytes) and, when cin is not a multiple of 4, one window's bytes
// gathered first.
constexpr size_t quantized_conv2d_scratch_bytes_dsp(int64_t in_channels, int64_t kernel_h,
                                                    int64_t kernel_w, int64_t out_channels) {
  const auto groups = static_cast<size_t>((kernel_h * kernel_w * in_channels + 3) / 4);
  return groups * 32 + static_cast<size_t>(out_channels) * 12 +
         (in_channels % 4 != 0 ? groups * 4 : 0) + 2 * kScratchAlign;
}

// cortex_m::quantized_depthwise_conv2d_nhwc (depth multiplier 1). The 3x3 path (horizontal
// stride 1 or 2, dilation 1): per block of eight channels a 208-byte record (the taps' weights,
// bases, multipliers, shifts), three input rows copied with their padding columns, block-major
// (eight bytes a column), as wide as the output pixel pairs reach, and two output pixels for an
// odd row end. Any other shape: per block of eight channels 128 bytes of bases, multipliers and
// shifts, and one input row of padding (width * channels bytes). The larger of the two.
constexpr int64_t depthwise3x3_padded_width(int64_t out_width, int64_t stride_w) {
  return ((out_width + 1) / 2 * 2 - 1) * stride_w + 3;
}
constexpr size_t quantized_depthwise_conv2d_scratch_bytes(int64_t channels, int64_t in_width,
                                                          int64_t out_width, int64_t stride_w) {
  const size_t blocks = static_cast<size_t>((channels + 7) / 8);
  const size_t rows3x3 =
      align_scratch(blocks * 208) +
      align_scratch(3 * blocks * 8 *
                    static_cast<size_t>(depthwise3x3_padded_width(out_width, stride_w))) +
      align_scratch(2 * blocks * 8);
  const size_t general = align_scratch(blocks * 32 * sizeof(int32_t)) +
                         align_scratch(static_cast<size_t>(channels * in_width));
  return (rows3x3 > general ? rows3x3 : general) + 2 * kScratchAlign;
}

// quantized_depthwise_conv2d_nhwc's DSP path (dsp/depthwise_dsp.cpp, depth multiplier 1): the
// weights of each pair of taps as int16 pairs (taps rounded up to even, 4 bytes a channel a
// pair), one row of -input_offset bytes for taps in the padding, a pointer a tap, and per
// channel its requantisation record and bias (16 bytes).
constexpr size_t quantized_depthwise_conv2d_scratch_bytes_dsp(int64_t channels, int64_t kernel_h,
                                                              int64_t kernel_w) {
  const auto pairs = static_cast<size_t>((kernel_h * kernel_w + 1) / 2);
  const auto c = static_cast<size_t>(channels);
  return align_scratch(pairs * 4 * c) + align_scratch(c) +
         align_scratch(pairs * 2 * sizeof(void*)) + c * 16 + 2 * kScratchAlign;
}

// Every other cortex_m kernel computes in registers.
constexpr size_t quantized_linear_scratch_bytes() { return 0; }
constexpr size_t quantized_pool2d_scratch_bytes() { return 0; }

}  // namespace pteron::cortex_m
