// Implicit im2col for convolution as a GEMM: packs the B operand of
//   out[co, (oh, ow)] = sum_{(ci, kh, kw)} weight[co, (ci, kh, kw)] * input[ci, ih, iw]
// straight from one image (and group) of the NCHW input into the GEMM's panel layout, so the
// K x (OH * OW) im2col matrix is never materialised (no scratch beyond the GEMM's panels).
#pragma once

#include <cstdint>

#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/gemm.h"

namespace pteron {

template <typename T>
struct Im2colSource {
  using Acc = typename ComputeType<T>::type;
  const T* input;  // in_per_group x in_h x in_w channels of one image
  const ConvShape* s;

  GemmBSource<Acc> source() const { return {&pack, this}; }

  // Rows k = (ci, kh, kw), columns j = (oh, ow); see GemmBSource for the panel layout.
  static void pack(const void* self, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                   Acc* dst) {
    const Im2colSource& src = *static_cast<const Im2colSource*>(self);
    const ConvShape& s = *src.s;
    const int64_t khw = s.kernel_h * s.kernel_w;
    const int64_t panel_stride = kc * nr;
    // Columns past nc in the last panel are zero.
    const int64_t tail = nc % nr;
    if (tail != 0) {
      Acc* last = dst + (nc / nr) * panel_stride;
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = tail; j < nr; ++j) last[k * nr + j] = Acc(0);
    }
    for (int64_t k = 0; k < kc; ++k) {
      const int64_t row = k0 + k;
      const int64_t ci = row / khw;
      const int64_t kh = (row % khw) / s.kernel_w;
      const int64_t kw = row % s.kernel_w;
      const T* plane = src.input + ci * s.in_h * s.in_w;
      const int64_t ih_off = kh * s.dilation_h - s.pad_h;
      const int64_t iw_off = kw * s.dilation_w - s.pad_w;
      // Output columns whose input column is inside the image: ow in [ow_lo, ow_hi).
      const int64_t ow_lo = iw_off >= 0 ? 0 : (-iw_off + s.stride_w - 1) / s.stride_w;
      int64_t ow_hi = s.in_w - 1 - iw_off < 0 ? 0 : (s.in_w - 1 - iw_off) / s.stride_w + 1;
      if (ow_hi > s.out_w) ow_hi = s.out_w;
      int64_t oh = j0 / s.out_w, ow = j0 % s.out_w;
      // Write position: lane within the current panel, advancing to the next panel every nr.
      // Values arrive in runs (zeros, or input columns at a fixed stride) that are split at
      // panel boundaries so every store loop is contiguous.
      Acc* d = dst + k * nr;
      int64_t lane = 0;
      auto zeros = [&](int64_t count) {
        while (count > 0) {
          const int64_t n = count < nr - lane ? count : nr - lane;
          for (int64_t t = 0; t < n; ++t) d[lane + t] = Acc(0);
          count -= n;
          lane += n;
          if (lane == nr) {
            lane = 0;
            d += panel_stride;
          }
        }
      };
      auto copy = [&](const T* from, int64_t count) {
        const int64_t stride = s.stride_w;
        while (count > 0) {
          const int64_t n = count < nr - lane ? count : nr - lane;
          Acc* to = d + lane;
          if (stride == 1) {
            for (int64_t t = 0; t < n; ++t) to[t] = load_value(from[t]);
          } else {
            for (int64_t t = 0; t < n; ++t) to[t] = load_value(from[t * stride]);
          }
          from += n * stride;
          count -= n;
          lane += n;
          if (lane == nr) {
            lane = 0;
            d += panel_stride;
          }
        }
      };
      for (int64_t j = 0; j < nc;) {
        const int64_t run = (s.out_w - ow) < (nc - j) ? (s.out_w - ow) : (nc - j);
        const int64_t ih = oh * s.stride_h + ih_off;
        if (ih < 0 || ih >= s.in_h) {
          zeros(run);
        } else {
          const T* in_row = plane + ih * s.in_w;
          const int64_t end = ow + run;
          const int64_t lo = ow_lo > ow ? (ow_lo < end ? ow_lo : end) : ow;
          const int64_t hi = ow_hi < end ? (ow_hi > lo ? ow_hi : lo) : end;
          zeros(lo - ow);
          if (hi > lo) copy(in_row + lo * s.stride_w + iw_off, hi - lo);
          zeros(end - hi);
        }
        j += run;
        ow = 0;
        ++oh;
      }
    }
  }
};

}  // namespace pteron
