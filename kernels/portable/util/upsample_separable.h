// Separable 2-D resampling as ATen's `separable_upsample_generic_Nd_kernel_impl`: along W, then
// along H, each output taking a window of inputs with weights filter(distance) normalised to sum
// to 1; the W pass is rounded to the dtype before the H pass (ATen stores it), and a dim whose
// size does not change is passed through. Used by _upsample_bilinear2d_aa (float, double,
// uint8) and by the uint8 bilinear/bicubic kernels, which ATen runs this way.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/upsample.h"

namespace pteron {

enum class SeparableFilter { Linear, Cubic };

template <typename S>
struct SeparableWindow {
  int64_t min = 0, size = 0;
  S center = 0, invscale = 1, total = 0, delta = 0;
  SeparableFilter filter_kind = SeparableFilter::Linear;
  S cubic_a = S(-0.75);
  bool identity = false;  // the dim keeps its size: out[i] = in[i]

  S filter(int64_t j) const {
    S x = static_cast<S>((static_cast<S>(j + min) - center + 0.5 - delta) * invscale);
    x = x < 0 ? -x : x;
    if (filter_kind == SeparableFilter::Linear) return x < S(1) ? S(1) - x : S(0);
    const S a = cubic_a;
    if (x < S(1)) return ((a + S(2)) * x - (a + S(3))) * x * x + S(1);
    if (x < S(2)) return ((a * x - S(5) * a) * x + S(8) * a) * x - S(4) * a;
    return S(0);
  }
  S weight(int64_t j) const { return total != S(0) ? filter(j) / total : filter(j); }
};

// _compute_indices_min_size_weights_aa for output index i. `delta` is ATen's
// align_corners_delta (0.5 for uint8 with align_corners and no antialias, else 0).
template <typename S>
SeparableWindow<S> separable_window(int64_t i, int64_t in, int64_t out, S scale,
                                    SeparableFilter kind, bool antialias, S delta) {
  SeparableWindow<S> w;
  if (in == out) {
    w.identity = true;
    w.min = i;
    w.size = 1;
    return w;
  }
  w.filter_kind = kind;
  w.delta = delta;
  w.cubic_a = antialias ? S(-0.5) : S(-0.75);
  const S half = kind == SeparableFilter::Linear ? S(1) : S(2);  // interp_size * 0.5
  const S support = antialias && scale >= S(1) ? half * scale : half;
  w.center = static_cast<S>(scale * (static_cast<double>(i) + 0.5 - delta));
  w.invscale = antialias && scale >= S(1) ? S(1) / scale : S(1);
  // Clamped before the casts: the scale may come from the program.
  const int64_t lo = upsample_clamped_index(w.center - support + 0.5 + delta, 0, in + 1);
  w.min = lo > 0 ? lo : 0;
  const int64_t hi = upsample_clamped_index(w.center + support + 0.5 + delta, 0, in + 1);
  w.size = (hi < in ? hi : in) - w.min;
  for (int64_t j = 0; j < w.size; ++j) w.total += w.filter(j);
  return w;
}

// self and out are [N, C, H, W] (any strides); s holds the spatial sizes and scales.
template <typename T>
void separable_resize_2d(const Tensor& self, Tensor& out, const UpsampleShape& s,
                         bool align_corners, bool antialias, SeparableFilter kind) {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* x = self.data<const T>();
  T* y = out.data<T>();
  const S scale_h = upsample_area_scale<S>(s, 0, align_corners);
  const S scale_w = upsample_area_scale<S>(s, 1, align_corners);
  const S delta = std::is_same_v<T, uint8_t> && align_corners && !antialias ? S(0.5) : S(0);
  const int64_t xh = self.stride(2), xw = self.stride(3), yh = out.stride(2), yw = out.stride(3);
  for (int64_t n = 0; n < out.size(0); ++n) {
    for (int64_t c = 0; c < out.size(1); ++c) {
      const T* plane = x + n * self.stride(0) + c * self.stride(1);
      T* oplane = y + n * out.stride(0) + c * out.stride(1);
      for (int64_t oh = 0; oh < s.out[0]; ++oh) {
        const SeparableWindow<S> wh =
            separable_window<S>(oh, s.in[0], s.out[0], scale_h, kind, antialias, delta);
        for (int64_t ow = 0; ow < s.out[1]; ++ow) {
          const SeparableWindow<S> ww =
              separable_window<S>(ow, s.in[1], s.out[1], scale_w, kind, antialias, delta);
          // The W pass at input row ih, rounded to T as ATen's intermediate buffer holds it.
          auto row = [&](int64_t ih) -> S {
            if (ww.size <= 0) return S(0);  // a program's scale put the window off the input
            const T* r = plane + ih * xh + ww.min * xw;
            if (ww.identity) return static_cast<S>(load_value(r[0]));
            S acc = static_cast<S>(load_value(r[0])) * ww.weight(0);
            for (int64_t j = 1; j < ww.size; ++j) {
              acc += static_cast<S>(load_value(r[j * xw])) * ww.weight(j);
            }
            return static_cast<S>(load_value(store_interpolated<T, S>(acc)));
          };
          S v;
          if (wh.identity) {
            v = row(wh.min);
          } else if (wh.size <= 0) {
            v = S(0);
          } else {
            v = row(wh.min) * wh.weight(0);
            for (int64_t i = 1; i < wh.size; ++i) v += row(wh.min + i) * wh.weight(i);
          }
          oplane[oh * yh + ow * yw] = store_interpolated<T, S>(v);
        }
      }
    }
  }
}

}  // namespace pteron
