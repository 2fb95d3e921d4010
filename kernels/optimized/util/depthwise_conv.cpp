#include "kernels/optimized/util/depthwise_conv.h"

#include "kernels/optimized/util/parallel.h"

namespace pteron::optimized {
namespace {

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// y[ow] += w * src[ow * stride] for ow in [lo, hi); kStride != 0 fixes the stride at compile
// time (the loads then vectorise), 0 reads `stride`.
template <int64_t kStride>
void axpy_row(const float* src, int64_t stride, float w, int64_t lo, int64_t hi, float* y) {
  const int64_t st = kStride != 0 ? kStride : stride;
  for (int64_t ow = lo; ow < hi; ++ow) y[ow] += w * src[ow * st];
}

void plane(const ConvShape& s, const float* x, const float* w, float b, float* y, bool relu) {
  for (int64_t oh = 0; oh < s.out_h; ++oh) {
    float* yrow = y + oh * s.out_w;
    for (int64_t ow = 0; ow < s.out_w; ++ow) yrow[ow] = b;
    for (int64_t ki = 0; ki < s.kernel_h; ++ki) {
      const int64_t ih = oh * s.stride_h - s.pad_h + ki * s.dilation_h;
      if (ih < 0 || ih >= s.in_h) continue;
      const float* row = x + ih * s.in_w;
      for (int64_t kj = 0; kj < s.kernel_w; ++kj) {
        // Output columns whose tap kj lands inside the row: lo <= ow < hi.
        const int64_t off = kj * s.dilation_w - s.pad_w;
        const int64_t lo = min64(off >= 0 ? 0 : (-off + s.stride_w - 1) / s.stride_w, s.out_w);
        const int64_t hi =
            s.in_w - off <= 0 ? 0 : min64(s.out_w, (s.in_w - off - 1) / s.stride_w + 1);
        const float wv = w[ki * s.kernel_w + kj];
        if (s.stride_w == 1) {
          axpy_row<1>(row + off, 1, wv, lo, hi, yrow);
        } else if (s.stride_w == 2) {
          axpy_row<2>(row + off, 2, wv, lo, hi, yrow);
        } else {
          axpy_row<0>(row + off, s.stride_w, wv, lo, hi, yrow);
        }
      }
    }
    if (relu) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) yrow[ow] = yrow[ow] < 0.0f ? 0.0f : yrow[ow];
    }
  }
}

}  // namespace

void depthwise_conv2d_f32(const ConvShape& s, const float* input, const float* weight,
                          const float* bias, float* out, bool relu) {
  const int64_t planes = s.batch * s.out_channels, taps = s.kernel_h * s.kernel_w;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  opt::parallel_for(planes, out_plane * taps, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % s.out_channels;
      plane(s, input + p * in_plane, weight + c * taps, bias != nullptr ? bias[c] : 0.0f,
            out + p * out_plane, relu);
    }
  });
}

}  // namespace pteron::optimized
