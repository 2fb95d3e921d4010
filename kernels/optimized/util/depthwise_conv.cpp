#include "kernels/optimized/util/depthwise_conv.h"

#include <algorithm>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/depthwise_conv.h"

namespace pteron::optimized {

namespace {

void simd_row(const DepthwiseRowArgs& row, const void* context) {
  const OutputClamp& c = *static_cast<const OutputClamp*>(context);
  opt::isa_kernels().depthwise_row(row, c.lo, c.hi);
}

}  // namespace

void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, const OutputClamp& clamp) {
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
      if (!depthwise_conv2d_rows(part, x, w, b, y, simd_row, &clamp)) {
        // Geometries the padded rows do not take: the portable direct loop, then the clamp.
        depthwise_conv2d<float>(part, x, w, b, y);
        if (clamp.active()) clamp.apply_rows(y, 0, 1, count * out_plane);
      }
      p += count;
    }
  });
}

}  // namespace pteron::optimized
