// The loops of vector_kernels.h, written once over a vector type V (isa_avx512.cpp,
// isa_avx2.cpp) that provides, for int32 lanes (V::kLanes of them) and bytes (V::kByteLanes):
//   I32 set1(int32_t); F32 set1f(float);
//   I32 load_i8(const int8_t*, int64_t count)    the first count (<= kLanes) widened, rest 0
//   I32 load_i32(const int32_t*, int64_t count); F32 load_f32(const float*, int64_t count)
//   I32 add(I32, I32), sub(I32, I32), mullo(I32, I32), shl(I32, int)
//   I32 requantize(I32 value, I32 mult, I32 left, I32 right)   util/requantize.h's, bit exact
//   I32 quantize_lanes(F32 x, F32 scale, F32 lo, F32 hi)  round half to even of x * scale,
//                                                          clamped, NaN as 0, as int32
//   void store_i8(int8_t*, I32 q, I32 offset, I32 lo, I32 hi, int64_t count)
//                                                          q + offset clamped, the first count
//   B min_bytes(); B load_bytes(const int8_t*, int64_t count)   missing bytes -128
//   B max_bytes(B, B); void spill_bytes(B, int8_t* kByteLanes bytes)
//   void lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n)
//                                                          out[i] = table[in[i] + 128]
//   void store_i32(int32_t*, I32)                          all kLanes lanes
// Only the ISA sources include this file, after defining V.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/host/vector_kernels.h"

namespace pteron::cortex_m::host {

template <class V>
void quantize_loop(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp,
                   int32_t qmin, int32_t qmax) {
  const auto scale = V::set1f(inv_scale);
  const auto lo = V::set1f(static_cast<float>(qmin - zp));
  const auto hi = V::set1f(static_cast<float>(qmax - zp));
  const auto offset = V::set1(zp), int8_min = V::set1(-128), int8_max = V::set1(127);
  for (int64_t i = 0; i < n; i += V::kLanes) {
    const int64_t count = n - i < V::kLanes ? n - i : V::kLanes;
    const auto q = V::quantize_lanes(V::load_f32(in + i, count), scale, lo, hi);
    V::store_i8(out + i, q, offset, int8_min, int8_max, count);
  }
}

template <class V>
void add_loop(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  const auto requant = [](int32_t multiplier, int32_t shift) {
    const auto m = V::set1(multiplier);
    const auto l = V::set1(requantize_left_shift(shift));
    const auto r = V::set1(requantize_right_shift(shift));
    return [=](auto v) { return V::requantize(v, m, l, r); };
  };
  const auto q1 = requant(p.mult1, p.shift1), q2 = requant(p.mult2, p.shift2);
  const auto qo = requant(p.out_mult, p.out_shift);
  const auto zp1 = V::set1(p.zp1), zp2 = V::set1(p.zp2), out_zp = V::set1(p.out_zp);
  const auto lo = V::set1(p.act_min), hi = V::set1(p.act_max);
  for (int64_t i = 0; i < n; i += V::kLanes) {
    const int64_t count = n - i < V::kLanes ? n - i : V::kLanes;
    const auto x = q1(V::shl(V::sub(V::load_i8(a + i, count), zp1), kAddLeftShift));
    const auto y = q2(V::shl(V::sub(V::load_i8(b + i, count), zp2), kAddLeftShift));
    V::store_i8(out + i, qo(V::add(x, y)), out_zp, lo, hi, count);
  }
}

template <class V>
void mul_loop(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  const auto m = V::set1(p.out_mult);
  const auto l = V::set1(requantize_left_shift(p.out_shift));
  const auto r = V::set1(requantize_right_shift(p.out_shift));
  const auto zp1 = V::set1(p.zp1), zp2 = V::set1(p.zp2), out_zp = V::set1(p.out_zp);
  const auto lo = V::set1(-128), hi = V::set1(127);
  for (int64_t i = 0; i < n; i += V::kLanes) {
    const int64_t count = n - i < V::kLanes ? n - i : V::kLanes;
    const auto x = V::sub(V::load_i8(a + i, count), zp1);
    const auto y = V::sub(V::load_i8(b + i, count), zp2);
    V::store_i8(out + i, V::requantize(V::mullo(x, y), m, l, r), out_zp, lo, hi, count);
  }
}

template <class V>
void max_pool_loop(const int8_t* in, int8_t* out, const MaxPoolParams& params) {
  const MaxPoolParams p = params;  // a local copy: int8 stores through `out` cannot alias it
  const auto shift = V::set1(p.zp_shift), lo = V::set1(p.act_min), hi = V::set1(p.act_max);
  const int64_t c = p.c;
  for (int32_t b = 0; b < p.n; ++b, in += static_cast<int64_t>(p.h) * p.w * c)
    for (int32_t oy = 0; oy < p.oh; ++oy)
      for (int32_t ox = 0; ox < p.ow; ++ox, out += c) {
        const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int64_t c0 = 0; c0 < c; c0 += V::kByteLanes) {
          const int64_t live = c - c0 < V::kByteLanes ? c - c0 : V::kByteLanes;
          auto m = V::min_bytes();
          for (int32_t ky = 0; ky < p.win.kernel[0]; ++ky) {
            const int32_t y = y0 + ky * p.win.dilation[0];
            if (y < 0 || y >= p.h) continue;
            for (int32_t kx = 0; kx < p.win.kernel[1]; ++kx) {
              const int32_t x = x0 + kx * p.win.dilation[1];
              if (x < 0 || x >= p.w) continue;
              m = V::max_bytes(
                  m, V::load_bytes(in + (static_cast<int64_t>(y) * p.w + x) * c + c0, live));
            }
          }
          alignas(64) int8_t maxima[V::kByteLanes];
          V::spill_bytes(m, maxima);
          for (int64_t q = 0; q < live; q += V::kLanes) {
            const int64_t count = live - q < V::kLanes ? live - q : V::kLanes;
            V::store_i8(out + c0 + q, V::load_i8(maxima + q, count), shift, lo, hi, count);
          }
        }
      }
}

// The average pool's output row `row` of n * oh, channels [c0, c0 + count): each window's
// in-bounds pixels summed in int32 lanes (one pass over the window, the sums on the stack),
// then the rounded means (scalar: an integer divide per output, bit for bit arm_avgpool_s8's).
template <class V>
void avg_pool_loop(const int8_t* in, int8_t* out, const PoolShape& p, int64_t row, int64_t count,
                   int64_t c0) {
  alignas(64) int32_t acc[kAvgPoolChannels + V::kLanes];  // whole vectors past count
  const int64_t c = p.c, b = row / p.oh;
  const int32_t oy = static_cast<int32_t>(row % p.oh);
  const int8_t* image = in + b * p.h * p.w * c + c0;
  for (int32_t ox = 0; ox < p.ow; ++ox) {
    const Bounds bd = window_bounds(p, oy, ox);
    for (int64_t k = 0; k < count; k += V::kLanes) V::store_i32(acc + k, V::set1(0));
    for (int32_t y = bd.y_lo; y < bd.y_hi; ++y)
      for (int32_t x = bd.x_lo; x < bd.x_hi; ++x) {
        const int8_t* pixel = image + (static_cast<int64_t>(y) * p.w + x) * c;
        for (int64_t k = 0; k < count; k += V::kLanes) {
          const int64_t live = count - k < V::kLanes ? count - k : V::kLanes;
          V::store_i32(acc + k,
                       V::add(V::load_i32(acc + k, V::kLanes), V::load_i8(pixel + k, live)));
        }
      }
    const int32_t window = (bd.y_hi - bd.y_lo) * (bd.x_hi - bd.x_lo);
    int8_t* o = out + ((b * p.oh + oy) * p.ow + ox) * c + c0;
    for (int64_t k = 0; k < count; ++k) o[k] = window > 0 ? rounded_mean(acc[k], window) : 0;
  }
}

// One output row's channels [c0, c0 + live), each pixel's window starting at row y0: the
// channel group's weights (in registers when KH x KW is known at compile time; 0 x 0: the op's,
// read per tap) and requantisation constants are loaded once for the row. Columns [lo, hi)
// (lo <= hi) have
// every tap inside the input and run unchecked; the others read a tap outside the input as the
// zero point (-input_offset), whose (x + input_offset) * w is 0, so every pixel starts from
// `base` (bias + input_offset * the channel's weight sum), as the interior does.
template <class V, int KH, int KW>
void depthwise_row_group(const DepthwiseRows& d, const ConvParams& p, const int8_t* image,
                         int32_t y0, int32_t lo, int32_t hi, int64_t c0, int64_t live,
                         int8_t* out_row) {
  const int64_t c = p.cout, cp = d.channels;
  const int32_t kh = KH > 0 ? KH : p.kh, kw = KW > 0 ? KW : p.kw;
  const int32_t dy = p.win.dilation[0], dx = p.win.dilation[1];
  const int32_t sx = p.win.stride[1], pad_x = p.win.padding[1];
  const auto base = V::load_i32(d.base + c0, V::kLanes);
  const auto mult = V::load_i32(p.mult + c0, live);
  const auto left = V::load_i32(d.left + c0, live), right = V::load_i32(d.right + c0, live);
  const auto out_off = V::set1(p.out_off), act_lo = V::set1(p.act_min);
  const auto act_hi = V::set1(p.act_max), zero_point = V::set1(-p.in_off);
  const int32_t* w = d.weights + c0;
  decltype(V::set1(0)) taps[KH > 0 ? KH * KW : 1] = {};
  if constexpr (KH > 0) {
    for (int t = 0; t < KH * KW; ++t) taps[t] = V::load_i32(w + t * cp, V::kLanes);
  }
  auto weight = [&](int32_t t) {
    if constexpr (KH > 0) {
      return taps[t];
    } else {
      return V::load_i32(w + t * cp, V::kLanes);
    }
  };
  auto store = [&](decltype(V::set1(0)) acc, int32_t ox) {
    V::store_i8(out_row + ox * c + c0, V::requantize(acc, mult, left, right), out_off, act_lo,
                act_hi, live);
  };
  auto edge = [&](int32_t ox) {
    const int32_t x0 = ox * sx - pad_x;
    auto acc = base;
    for (int32_t ky = 0; ky < kh; ++ky) {
      const int32_t iy = y0 + ky * dy;
      for (int32_t kx = 0; kx < kw; ++kx) {
        const int32_t ix = x0 + kx * dx;
        const auto x =
            iy >= 0 && iy < p.h && ix >= 0 && ix < p.w
                ? V::load_i8(image + (static_cast<int64_t>(iy) * p.w + ix) * c + c0, live)
                : zero_point;
        acc = V::add(acc, V::mullo(x, weight(ky * kw + kx)));
      }
    }
    store(acc, ox);
  };
  for (int32_t ox = 0; ox < lo; ++ox) edge(ox);
  if (hi > lo) {
    const int64_t row_step = static_cast<int64_t>(dy) * p.w * c, tap_step = int64_t{dx} * c;
    const int8_t* window =
        image + (static_cast<int64_t>(y0) * p.w + (static_cast<int64_t>(lo) * sx - pad_x)) * c + c0;
    for (int32_t ox = lo; ox < hi; ++ox, window += int64_t{sx} * c) {
      auto acc = base;
      for (int32_t ky = 0; ky < kh; ++ky)
        for (int32_t kx = 0; kx < kw; ++kx)
          acc = V::add(acc, V::mullo(V::load_i8(window + ky * row_step + kx * tap_step, live),
                                     weight(ky * kw + kx)));
      store(acc, ox);
    }
  }
  for (int32_t ox = hi; ox < p.ow; ++ox) edge(ox);
}

// Output rows [first, last) of n * oh, each finished before the next starts (the in-place
// promise of kernels/cortex_m/in_place.h: a row is the depthwise kernel's run).
template <class V, int KH, int KW>
void depthwise_rows(const DepthwiseRows& d, int64_t first, int64_t last) {
  const ConvParams p = *d.p;  // a local copy: int8 stores through `out` cannot alias it
  const int64_t c = p.cout;
  const int32_t sx = p.win.stride[1], pad_x = p.win.padding[1];
  // Interior columns: x0 = ox * sx - pad_x >= 0 and x0 + (kw - 1) * dilation < w.
  const int32_t last_x0 = p.w - 1 - (p.kw - 1) * p.win.dilation[1];
  int32_t ox_lo = (pad_x + sx - 1) / sx;
  int32_t ox_hi = last_x0 + pad_x < 0 ? ox_lo : (last_x0 + pad_x) / sx + 1;
  if (ox_lo > p.ow) ox_lo = p.ow;
  if (ox_hi > p.ow) ox_hi = p.ow;
  if (ox_hi < ox_lo) ox_hi = ox_lo;
  for (int64_t row = first; row < last; ++row) {
    const int64_t b = row / p.oh;
    const int32_t y0 = static_cast<int32_t>(row % p.oh) * p.win.stride[0] - p.win.padding[0];
    const int8_t* image = d.in + b * p.h * p.w * c;
    int8_t* out_row = d.out + row * p.ow * c;
    const bool rows_inside = y0 >= 0 && y0 + (p.kh - 1) * p.win.dilation[0] < p.h;
    for (int64_t c0 = 0; c0 < c; c0 += V::kLanes) {
      depthwise_row_group<V, KH, KW>(d, p, image, y0, rows_inside ? ox_lo : p.ow,
                                     rows_inside ? ox_hi : p.ow, c0,
                                     c - c0 < V::kLanes ? c - c0 : V::kLanes, out_row);
    }
  }
}

// The common window sizes with their weights in registers; the others read them per tap.
template <class V>
void depthwise_rows_loop(const DepthwiseRows& d, int64_t first, int64_t last) {
  if (d.p->kh == 3 && d.p->kw == 3) return depthwise_rows<V, 3, 3>(d, first, last);
  if (d.p->kh == 5 && d.p->kw == 5) return depthwise_rows<V, 5, 5>(d, first, last);
  depthwise_rows<V, 0, 0>(d, first, last);
}

template <class V>
constexpr VectorKernels vector_kernels() {
  return {&quantize_loop<V>,       &add_loop<V>, &mul_loop<V>,     &max_pool_loop<V>,
          &depthwise_rows_loop<V>, &V::lut,      &avg_pool_loop<V>};
}

}  // namespace pteron::cortex_m::host
