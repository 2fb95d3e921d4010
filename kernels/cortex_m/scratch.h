// Scratch bytes each Cortex-M kernel asks of ctx.allocate_scratch, as functions of shapes the
// compiler knows, so the memory plan can reserve the largest per program instead of anything
// being allocated at run time. Plain C++17 with no runtime dependencies: the compiler (C++20)
// includes this header too. The sizes are what the MVE paths need (the scalar paths need none)
// plus alignment slack; a kernel that gets less falls back to its scalar path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron::cortex_m {

constexpr size_t kScratchAlign = 16;

constexpr size_t align_scratch(size_t bytes) {
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}

// cortex_m::quantized_conv2d_nhwc: per output channel its kernel sum, multiplier and shifts (a
// record of eight int32) and, unless the
// convolution is 1x1 with stride 1 and no padding, four im2col columns of kh * kw * cin bytes.
constexpr size_t quantized_conv2d_scratch_bytes(int64_t in_channels, int64_t kernel_h,
                                                int64_t kernel_w, int64_t out_channels,
                                                bool pointwise) {
  const size_t sums = align_scratch(static_cast<size_t>(out_channels) * 8 * sizeof(int32_t));
  const size_t column =
      pointwise ? 0 : align_scratch(static_cast<size_t>(4 * kernel_h * kernel_w * in_channels));
  return sums + column + 2 * kScratchAlign;
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

// Every other cortex_m kernel computes in registers.
constexpr size_t quantized_linear_scratch_bytes() { return 0; }
constexpr size_t quantized_pool2d_scratch_bytes() { return 0; }

}  // namespace pteron::cortex_m
