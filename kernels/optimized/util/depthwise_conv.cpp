#include "kernels/optimized/util/depthwise_conv.h"

#include <algorithm>

#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/depthwise_conv.h"

namespace pteron::optimized {

// The portable kernel's row loop (fused 3-tap rows, tap ranges computed once per call) is
// already vectorised; what it lacks is threads. Each chunk of (image, channel) planes runs it
// as a depthwise convolution of its own over those channels.
void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, bool relu) {
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
      depthwise_conv2d<float>(part, input + p * in_plane, weight + c0 * taps,
                              bias != nullptr ? bias + c0 : nullptr, y);
      if (relu) {
        for (int64_t i = 0; i < count * out_plane; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
      }
      p += count;
    }
  });
}

}  // namespace pteron::optimized
