#include "kernels/portable/util/conv_transpose.h"

#include <cstdint>

namespace pteron {
namespace {

constexpr int64_t kChunk = 256;  // output columns accumulated at once on the stack

int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

}  // namespace

template <typename T>
void conv_transpose2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out) {
  using Acc = typename ComputeType<T>::type;
  const int64_t cin_g = s.in_per_group(), cout_g = s.out_per_group();
  const int64_t in_plane = s.in_h * s.in_w, khw = s.kernel_h * s.kernel_w;
  Acc acc[kChunk];
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t co = 0; co < s.out_channels; ++co) {
      const int64_t g = co / cout_g, col = co % cout_g;
      const Acc b = bias != nullptr ? load_value(bias[co]) : Acc(0);
      T* oplane = out + (n * s.out_channels + co) * s.out_h * s.out_w;
      for (int64_t oh = 0; oh < s.out_h; ++oh) {
        for (int64_t ow0 = 0; ow0 < s.out_w; ow0 += kChunk) {
          const int64_t ow1 = min64(s.out_w, ow0 + kChunk);
          for (int64_t i = 0; i < ow1 - ow0; ++i) acc[i] = b;
          for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
            // Input row ih feeds output row ih * stride - pad + kh * dilation.
            const int64_t t = oh + s.pad_h - kh * s.dilation_h;
            if (t < 0 || t % s.stride_h != 0 || t / s.stride_h >= s.in_h) continue;
            const int64_t ih = t / s.stride_h;
            for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
              const int64_t shift = kw * s.dilation_w - s.pad_w;  // ow = iw * stride + shift
              const int64_t base = max64(ow0, shift);
              const int64_t first = base + mod(mod(shift, s.stride_w) - base, s.stride_w);
              const int64_t iw0 = (first - shift) / s.stride_w;
              for (int64_t c = 0; c < cin_g; ++c) {
                const int64_t ci = g * cin_g + c;
                const T* x = input + (n * s.in_channels + ci) * in_plane + ih * s.in_w;
                const Acc w = load_value(weight[(ci * cout_g + col) * khw + kh * s.kernel_w + kw]);
                for (int64_t ow = first, iw = iw0; ow < ow1 && iw < s.in_w;
                     ow += s.stride_w, ++iw) {
                  acc[ow - ow0] += w * load_value(x[iw]);
                }
              }
            }
          }
          T* orow = oplane + oh * s.out_w;
          for (int64_t i = 0; i < ow1 - ow0; ++i) orow[ow0 + i] = store_value<T>(acc[i]);
        }
      }
    }
  }
}

template void conv_transpose2d<float>(const ConvShape&, const float*, const float*, const float*,
                                      float*);
template void conv_transpose2d<double>(const ConvShape&, const double*, const double*,
                                       const double*, double*);
template void conv_transpose2d<Half>(const ConvShape&, const Half*, const Half*, const Half*,
                                     Half*);
template void conv_transpose2d<BFloat16>(const ConvShape&, const BFloat16*, const BFloat16*,
                                         const BFloat16*, BFloat16*);

}  // namespace pteron
