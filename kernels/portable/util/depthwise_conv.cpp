#include "kernels/portable/util/depthwise_conv.h"

#include <cstdint>

namespace pteron {
namespace {

// Output columns computed at once in a stack accumulator row.
constexpr int64_t kChunk = 256;
// Widest kernel row whose taps are fused into one pass over the accumulator.
constexpr int64_t kMaxFusedKW = 8;

int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// acc[ow - ow0] += sum_kw w[kw] * x[ow * SW + off + kw * dw] for ow in [lo, hi), where every tap
// is inside the input row. KWT / SW are compile-time for the common 3-wide, stride 1/2 kernels
// (0 = use the runtime value) so the loop over ow vectorises.
template <int KWT, int SWT, typename T, typename Acc>
void fused_taps(const T* x, const Acc* w, int64_t kw_n, int64_t sw_n, int64_t dw, int64_t off,
                Acc* acc, int64_t ow0, int64_t lo, int64_t hi) {
  const int64_t KW = KWT > 0 ? KWT : kw_n;
  const int64_t SW = SWT > 0 ? SWT : sw_n;
  Acc wv[kMaxFusedKW];
  for (int64_t k = 0; k < KW; ++k) wv[k] = w[k];
  for (int64_t ow = lo; ow < hi; ++ow) {
    const T* xp = x + ow * SW + off;
    Acc sum = acc[ow - ow0];
    for (int64_t k = 0; k < KW; ++k) sum += wv[k] * load_value(xp[k * dw]);
    acc[ow - ow0] = sum;
  }
}

template <typename T, typename Acc>
void one_tap(const T* x, Acc w, int64_t sw, int64_t off, Acc* acc, int64_t ow0, int64_t lo,
             int64_t hi) {
  if (sw == 1) {
    for (int64_t ow = lo; ow < hi; ++ow) acc[ow - ow0] += w * load_value(x[ow + off]);
  } else {
    for (int64_t ow = lo; ow < hi; ++ow) acc[ow - ow0] += w * load_value(x[ow * sw + off]);
  }
}

// Adds one kernel row (weights w[0..KW)) applied to input row x to acc for ow in [ow0, ow1).
template <typename T, typename Acc>
void kernel_row(const ConvShape& s, const T* x, const Acc* w, Acc* acc, int64_t ow0,
                int64_t ow1) {
  const int64_t KW = s.kernel_w, sw = s.stride_w, dw = s.dilation_w;
  // Tap kw reads column ow * sw + kw * dw - pad_w: valid for ow in [lo(kw), hi(kw)).
  auto lo = [&](int64_t kw) {
    const int64_t off = kw * dw - s.pad_w;
    return max64(ow0, off >= 0 ? 0 : (-off + sw - 1) / sw);
  };
  auto hi = [&](int64_t kw) {
    const int64_t last = s.in_w - 1 - (kw * dw - s.pad_w);
    return min64(ow1, last < 0 ? 0 : last / sw + 1);
  };
  int64_t in_lo = ow0, in_hi = ow1;  // columns where every tap is valid
  if (KW <= kMaxFusedKW) {
    for (int64_t kw = 0; kw < KW; ++kw) {
      in_lo = max64(in_lo, lo(kw));
      in_hi = min64(in_hi, hi(kw));
    }
  }
  if (KW > kMaxFusedKW || in_lo >= in_hi) in_lo = in_hi = ow0;  // no fused interior
  if (in_hi > in_lo) {
    const int64_t off = -s.pad_w;
    if (KW == 3 && sw == 1) {
      fused_taps<3, 1>(x, w, KW, sw, dw, off, acc, ow0, in_lo, in_hi);
    } else if (KW == 3 && sw == 2) {
      fused_taps<3, 2>(x, w, KW, sw, dw, off, acc, ow0, in_lo, in_hi);
    } else {
      fused_taps<0, 0>(x, w, KW, sw, dw, off, acc, ow0, in_lo, in_hi);
    }
  }
  // The edges (and everything, for wide kernels) tap by tap.
  for (int64_t kw = 0; kw < KW; ++kw) {
    const int64_t a = lo(kw), b = hi(kw), off = kw * dw - s.pad_w;
    one_tap(x, w[kw], sw, off, acc, ow0, a, min64(b, in_lo));
    one_tap(x, w[kw], sw, off, acc, ow0, max64(a, in_hi), b);
  }
}

}  // namespace

template <typename T>
void depthwise_conv2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out) {
  using Acc = typename ComputeType<T>::type;
  const int64_t mult = s.out_per_group();
  const int64_t khw = s.kernel_h * s.kernel_w;
  Acc acc[kChunk];
  Acc wrow[64];  // one kernel row in the compute type
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t co = 0; co < s.out_channels; ++co) {
      const T* plane = input + (n * s.in_channels + co / mult) * s.in_h * s.in_w;
      const T* wk = weight + co * khw;
      const Acc b = bias != nullptr ? load_value(bias[co]) : Acc(0);
      T* oplane = out + (n * s.out_channels + co) * s.out_h * s.out_w;
      for (int64_t oh = 0; oh < s.out_h; ++oh) {
        for (int64_t ow0 = 0; ow0 < s.out_w; ow0 += kChunk) {
          const int64_t ow1 = min64(s.out_w, ow0 + kChunk);
          for (int64_t i = 0; i < ow1 - ow0; ++i) acc[i] = b;
          for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
            const int64_t ih = oh * s.stride_h - s.pad_h + kh * s.dilation_h;
            if (ih < 0 || ih >= s.in_h) continue;
            const T* x = plane + ih * s.in_w;
            const T* wr = wk + kh * s.kernel_w;
            // Kernel rows wider than the local copy go in slices of 64 taps.
            for (int64_t k0 = 0; k0 < s.kernel_w; k0 += 64) {
              const int64_t kn = min64(64, s.kernel_w - k0);
              for (int64_t k = 0; k < kn; ++k) wrow[k] = load_value(wr[k0 + k]);
              ConvShape slice = s;
              slice.kernel_w = kn;
              slice.pad_w = s.pad_w - k0 * s.dilation_w;
              kernel_row<T, Acc>(slice, x, wrow, acc, ow0, ow1);
            }
          }
          T* orow = oplane + oh * s.out_w;
          for (int64_t i = 0; i < ow1 - ow0; ++i) orow[ow0 + i] = store_value<T>(acc[i]);
        }
      }
    }
  }
}

template void depthwise_conv2d<float>(const ConvShape&, const float*, const float*, const float*,
                                      float*);
template void depthwise_conv2d<double>(const ConvShape&, const double*, const double*,
                                       const double*, double*);
template void depthwise_conv2d<Half>(const ConvShape&, const Half*, const Half*, const Half*,
                                     Half*);
template void depthwise_conv2d<BFloat16>(const ConvShape&, const BFloat16*, const BFloat16*,
                                         const BFloat16*, BFloat16*);

}  // namespace pteron
