#include "kernels/optimized/util/depthwise_conv.h"

#include <algorithm>
#include <cstring>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/depthwise_conv.h"

namespace pteron::optimized {

namespace {

constexpr int64_t kBlock = opt::kDepthwiseBlock;

// Floats of zero-padded input rows one channel block packs at a time (64 KiB): a band of output
// rows is computed from them, so any image height fits.
constexpr int64_t kTileFloats = int64_t{1} << 14;
// Output floats of one band (computed, then moved to their planes; 32 KiB). With the tile and
// the packed weights (at most 16 KiB), a band takes about 115 KiB of its thread's stack (pool
// threads have the platform's default stack, 8 MiB on Linux).
constexpr int64_t kBandFloats = int64_t{1} << 13;
// Kernels up to 16x16 take channel blocks (9x9 56x56x64, 2 threads: 1.43 ms on plane rows with
// a cap of 64 taps); larger ones, whose padded rows rarely fit the tile, take plane rows.
constexpr int64_t kMaxBlockTaps = 256;
// Multiply-adds' worth of time one element's transpose and one SiLU or hardswish take (an upper
// bound: the hardswish is cheaper) for threading decisions.
constexpr int64_t kTransposeCost = 8;
constexpr int64_t kFunctionCost = 16;
// Input rows at least this wide are transposed row by row (mostly whole SIMD blocks already).
constexpr int64_t kRowTransposeWidth = 32;
// Output widths below which channel blocks beat plane rows (2 threads, AVX-512, widths 7-56
// 1.3-3.3x faster; a 112-wide 3x3 layer 1.2x slower: its rows fill whole vectors already and
// the transposes cost more than the idle lanes they save).
constexpr int64_t kChannelBlockWidth = 64;

void simd_row(const DepthwiseRowArgs& row, const void* context) {
  const OutputActivation& a = *static_cast<const OutputActivation*>(context);
  opt::isa_kernels().depthwise_row(row, a.lo, a.hi);
  a.apply_function_rows(row.y, 0, 1, row.count * row.n);
}

// Plane by plane, the SIMD row loop over padded rows (the portable walk's).
void depthwise_planes(const ConvShape& s, const float* input, const float* weight,
                      const float* bias, float* out, const OutputActivation& activation) {
  const int64_t taps = s.kernel_h * s.kernel_w, channels = s.out_channels;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  opt::parallel_for(s.batch * channels, out_plane * taps, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1;) {
      // Planes of one image from p up to the chunk's end or the image's last channel.
      const int64_t c0 = p % channels, count = std::min(p1 - p, channels - c0);
      ConvShape part = s;
      part.batch = 1;
      part.in_channels = part.out_channels = part.groups = count;
      float* y = out + p * out_plane;
      const float* x = input + p * in_plane;
      const float* w = weight + c0 * taps;
      const float* b = bias != nullptr ? bias + c0 : nullptr;
      if (!depthwise_conv2d_rows(part, x, w, b, y, simd_row, &activation)) {
        // Geometries the padded rows do not take: the portable direct loop, then the activation.
        depthwise_conv2d<float>(part, x, w, b, y);
        activation.apply_rows(y, 0, 1, count * out_plane);
      }
      p += count;
    }
  });
}

// Output rows per band of a channel block: as many as kTileFloats of padded input rows and
// kBandFloats of outputs hold (0: not even one fits).
int64_t band_rows(const ConvShape& s) {
  const int64_t tile_w = s.in_w + 2 * s.pad_w, span = (s.kernel_h - 1) * s.dilation_h + 1;
  // A narrow input row must fit the transposes' buffer.
  if (s.in_w < kRowTransposeWidth && s.in_w * kBlock > kBandFloats) return 0;
  const int64_t in_rows = kTileFloats / (tile_w * kBlock);
  if (in_rows < span) return 0;
  const int64_t by_tile = (in_rows - span) / s.stride_h + 1;
  return std::min({by_tile, kBandFloats / (s.out_w * kBlock), s.out_h});
}

// Output rows [oh0, oh0 + rows) of a block of `count` <= kBlock channels of one image (planes x
// -> planes y), from their zero-padded input rows transposed to channel-minor order.
void depthwise_band(const ConvShape& s, int64_t oh0, int64_t rows, const float* x,
                    const float* weight, const float* bias, float* y, int64_t count,
                    const OutputActivation& activation) {
  const opt::IsaKernels& isa = opt::isa_kernels();
  const int64_t taps = s.kernel_h * s.kernel_w, tile_w = s.in_w + 2 * s.pad_w;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t span = (s.kernel_h - 1) * s.dilation_h + 1;
  alignas(64) float w[kMaxBlockTaps * kBlock], b[kBlock];
  alignas(64) float tile[kTileFloats], outputs[kBandFloats];
  // Lanes past `count` compute zeros from zero weights and inputs (never stored).
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t c = 0; c < kBlock; ++c) w[t * kBlock + c] = c < count ? weight[c * taps + t] : 0;
  }
  for (int64_t c = 0; c < kBlock; ++c) b[c] = c < count && bias != nullptr ? bias[c] : 0;
  const int64_t row_floats = tile_w * kBlock, pixel_bytes = kBlock * sizeof(float);
  const int64_t ih0 = oh0 * s.stride_h - s.pad_h, in_rows = (rows - 1) * s.stride_h + span;
  // Tile rows [r_lo, r_hi) hold input rows; the others are padding.
  const int64_t r_lo = std::max<int64_t>(0, -ih0), r_hi = std::min(in_rows, s.in_h - ih0);
  for (int64_t r = 0; r < in_rows; ++r) {
    float* dst = tile + r * row_floats;
    if (r < r_lo || r >= r_hi) {
      std::memset(dst, 0, static_cast<size_t>(tile_w * pixel_bytes));
      continue;
    }
    if (count < kBlock) {  // lanes past count stay zero
      std::memset(dst, 0, static_cast<size_t>(tile_w * pixel_bytes));
      continue;
    }
    std::memset(dst, 0, static_cast<size_t>(s.pad_w * pixel_bytes));
    std::memset(dst + (s.pad_w + s.in_w) * kBlock, 0, static_cast<size_t>(s.pad_w * pixel_bytes));
  }
  // Rows of at least kRowTransposeWidth pixels are transposed one by one into their padded
  // place. Narrower ones go through `outputs` (not in use yet) a few rows at a time: one
  // transpose of consecutive rows is whole SIMD blocks over their pixels (row by row, a 14-wide
  // row left six columns to scalar moves, which cost more than the convolution), then each row
  // is copied into place.
  const int64_t chunk = s.in_w >= kRowTransposeWidth ? 0 : kBandFloats / (s.in_w * kBlock);
  for (int64_t r = r_lo; r < r_hi;) {
    if (chunk == 0) {
      isa.transpose(x + (ih0 + r) * s.in_w, in_plane, tile + r * row_floats + s.pad_w * kBlock,
                    kBlock, count, s.in_w);
      ++r;
      continue;
    }
    const int64_t n = std::min(chunk, r_hi - r);
    if (count < kBlock) std::memset(outputs, 0, static_cast<size_t>(n * s.in_w * pixel_bytes));
    isa.transpose(x + (ih0 + r) * s.in_w, in_plane, outputs, kBlock, count, n * s.in_w);
    for (int64_t i = 0; i < n; ++i, ++r) {
      std::memcpy(tile + r * row_floats + s.pad_w * kBlock, outputs + i * s.in_w * kBlock,
                  static_cast<size_t>(s.in_w * pixel_bytes));
    }
  }
  const opt::DepthwiseBlockArgs args{
      tile,         tile_w,       w,       b,    s.kernel_h, s.kernel_w, s.stride_h, s.stride_w,
      s.dilation_h, s.dilation_w, outputs, rows, s.out_w};
  isa.depthwise_block(args, activation.lo, activation.hi);
  activation.apply_function_rows(outputs, 0, 1, rows * s.out_w * kBlock);
  isa.transpose(outputs, kBlock, y + oh0 * s.out_w, out_plane, rows * s.out_w, count);
}

// Channel blocks: bands of output rows of kBlock channels of one image, every lane a channel.
void depthwise_channel_blocks(const ConvShape& s, const float* input, const float* weight,
                              const float* bias, float* out, const OutputActivation& activation) {
  const int64_t taps = s.kernel_h * s.kernel_w, channels = s.out_channels;
  const int64_t blocks = (channels + kBlock - 1) / kBlock, band = band_rows(s);
  const int64_t bands = (s.out_h + band - 1) / band;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  // Work per item in multiply-adds, with the transposes' moves and a SiLU's vector arithmetic
  // at their cost in those (a 14x14x480 3x3 layer's transposes took as long as its
  // multiply-adds; counted as multiply-adds alone it stayed on one thread).
  const int64_t in_pixels =
      ((band - 1) * s.stride_h + (s.kernel_h - 1) * s.dilation_h + 1) * s.in_w;
  const int64_t out_cost = taps + kTransposeCost + (activation.has_function() ? kFunctionCost : 0);
  const int64_t work = (band * s.out_w * out_cost + in_pixels * kTransposeCost) * kBlock;
  opt::parallel_for(s.batch * blocks * bands, work, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t plane_block = i / bands, oh0 = (i % bands) * band;
      const int64_t n = plane_block / blocks, c0 = (plane_block % blocks) * kBlock;
      const int64_t count = std::min(kBlock, channels - c0);
      const int64_t plane = n * channels + c0;
      depthwise_band(s, oh0, std::min(band, s.out_h - oh0), input + plane * in_plane,
                     weight + c0 * taps, bias != nullptr ? bias + c0 : nullptr,
                     out + plane * out_plane, count, activation);
    }
  });
}

bool depthwise_channel_blocks_pay_off(const ConvShape& s) {
  return s.out_w < kChannelBlockWidth && s.kernel_h * s.kernel_w <= kMaxBlockTaps &&
         band_rows(s) > 0;
}

}  // namespace

void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, const OutputActivation& activation) {
  if (depthwise_channel_blocks_pay_off(s)) {
    depthwise_channel_blocks(s, input, weight, bias, out, activation);
    return;
  }
  depthwise_planes(s, input, weight, bias, out, activation);
}

}  // namespace pteron::optimized
