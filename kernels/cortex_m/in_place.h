// How far before its input a windowed Cortex-M kernel (convolution, depthwise convolution) or
// a transpose may start its output, so that the memory planner can overlap the two when the input
// dies there: a 3x3 convolution on a 32x32x16 activation then needs 16 KiB plus under 1 KiB, not 32
// KiB. Plain C++17 with no runtime dependencies: the compiler computes the offset with it and the
// bare-metal kernel tests run every kernel path over buffers overlapped by it.
//
// What the kernels guarantee (op_quantized_conv2d.cpp, op_quantized_depthwise_conv2d.cpp and
// their dsp/ paths, scalar included): they walk the output pixels (NHWC, batch-major) in order,
// in runs of at most `pixels_in_flight` consecutive pixels; a run reads only input the run's
// pixels need, reads and writes nothing of a later run, and is finished before the next starts.
// Within a run reads and writes may interleave (a channel block's outputs stored before the
// next block reads the same pixels again). So an output byte may overwrite an input pixel only
// once every run that reads that pixel is over: the run of the pixel being written must come
// after the run of the input pixel's last reader, which holds when the two are at least
// `pixels_in_flight` pixels apart.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/scratch.h"

namespace pteron::cortex_m {

// Output pixels whose reads and writes a quantized_conv2d_nhwc path may interleave: four (the
// general MVE path's im2col columns, the DSP path's block, the 1x1 paths' blocks) or a narrow
// variant's tile of int32 accumulators, whichever path the core and shape pick.
constexpr int64_t conv2d_pixels_in_flight(int64_t out_channels) {
  const int64_t rows = conv2d_narrow_tile_pixels(out_channels, true);
  const int64_t pointwise = conv2d_narrow_tile_pixels(out_channels, false);
  const int64_t tile = rows > pointwise ? rows : pointwise;
  return tile > 4 ? tile : 4;
}

// quantized_depthwise_conv2d_nhwc: the 3x3 MVE path loads an output row's input rows before
// writing the row; the others go one pixel or a pair at a time.
constexpr int64_t depthwise_pixels_in_flight(int64_t out_width) {
  return out_width > 2 ? out_width : 2;
}

// An NHWC window operation: input [n, h, w, in_channels] -> output [n, out_h, out_w,
// out_channels], windows starting at (oy * stride_h - pad_top, ox * stride_w - pad_left).
struct WindowGeometry {
  int64_t n = 1, h = 0, w = 0, in_channels = 0;
  int64_t out_h = 0, out_w = 0, out_channels = 0;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

// The last output pixel whose window can read input pixel q: the last window starting at or
// before it in each dimension (windows start in order, so no later one reaches back to it).
inline int64_t window_last_reader(const WindowGeometry& g, int64_t q) {
  const int64_t image = g.h * g.w, b = q / image, iy = q % image / g.w, ix = q % g.w;
  int64_t oy = (iy + g.pad_top) / g.stride_h, ox = (ix + g.pad_left) / g.stride_w;
  if (oy > g.out_h - 1) oy = g.out_h - 1;
  if (ox > g.out_w - 1) ox = g.out_w - 1;
  return (b * g.out_h + oy) * g.out_w + ox;
}

// The fewest bytes an output written in `units` consecutive pieces of `unit_bytes` may start
// before its input of `items` pieces of `item_bytes`, when `last_reader(q)` is the last unit
// that reads input item q and `in_flight` units may interleave their reads and writes:
// writing unit u overwrites input bytes below (u + 1) * unit_bytes - lag, and every input item
// there must have its last reader at least `in_flight` units before u (see the top of this
// file). Linear in the counts; 0 when the output may start where the input does.
template <typename LastReader>
int64_t least_in_place_lag(int64_t units, int64_t unit_bytes, int64_t items, int64_t item_bytes,
                           int64_t in_flight, LastReader last_reader) {
  int64_t done = 0;        // input items [0, done) are read for the last time
  int64_t last_read = -1;  // the latest last reader among them
  int64_t lag = 0;
  for (int64_t u = 0; u < units; ++u) {
    while (done < items) {
      const int64_t r = last_reader(done);
      const int64_t latest = r > last_read ? r : last_read;
      if (latest > u - in_flight) break;
      last_read = latest;
      ++done;
    }
    const int64_t need = (u + 1) * unit_bytes - done * item_bytes;
    if (need > lag) lag = need;
  }
  return lag;
}

// A window operation's: its units are output pixels, its items input pixels.
inline int64_t window_in_place_lag(const WindowGeometry& g, int64_t pixels_in_flight) {
  return least_in_place_lag(g.n * g.out_h * g.out_w, g.out_channels, g.n * g.h * g.w, g.in_channels,
                            pixels_in_flight, [&](int64_t q) { return window_last_reader(g, q); });
}

// cortex_m::transpose (op_transpose.cpp) walks its output as 4 dims [a, b, c, d] (the rank
// padded with leading 1s) in runs of one [c, d] slab per (a, b), in order: the scalar and
// gather paths a row of d at a time, the image-input scatter path a slab at a time, one
// channel after another. A byte of the input is read once, by the run holding its output
// position, so it may be overwritten once that run is over: least_in_place_lag with slabs
// for pixels and one run in flight. `in_sizes` has `rank` (<= 4) dims, `perm` is the output's
// permutation.
inline int64_t transpose_in_place_lag(int32_t rank, const int64_t* in_sizes, const int64_t* perm) {
  int64_t size[4] = {1, 1, 1, 1};
  const int32_t pad = 4 - rank;
  for (int32_t d = 0; d < rank; ++d) size[pad + d] = in_sizes[perm[d]];
  const int64_t runs = size[0] * size[1], slab = size[2] * size[3];
  int64_t in_elements = 1;
  for (int32_t d = 0; d < rank; ++d) in_elements *= in_sizes[d];
  // The run that reads input element q: its input coordinates, permuted into the walk's.
  auto run_of = [&](int64_t q) {
    int64_t coord[4] = {0, 0, 0, 0};
    for (int32_t e = rank - 1; e >= 0; --e) coord[e] = q % in_sizes[e], q /= in_sizes[e];
    int64_t walk[4] = {0, 0, 0, 0};
    for (int32_t d = 0; d < rank; ++d) walk[pad + d] = coord[perm[d]];
    return walk[0] * size[1] + walk[1];
  };
  return least_in_place_lag(runs, slab, in_elements, 1, 1, run_of);
}

}  // namespace pteron::cortex_m
