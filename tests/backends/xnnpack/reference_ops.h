// Scalar NHWC reference implementations (double accumulation) for the XNNPACK tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace pteron::xnnpack::testing {

struct Conv2dParams {
  int n, h, w, groups, gic, goc;  // input NHWC = [n, h, w, groups * gic]
  int kh, kw;
  int stride_h = 1, stride_w = 1;
  int dil_h = 1, dil_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int out_h() const { return (h + pad_top + pad_bottom - ((kh - 1) * dil_h + 1)) / stride_h + 1; }
  int out_w() const { return (w + pad_left + pad_right - ((kw - 1) * dil_w + 1)) / stride_w + 1; }
  int ic() const { return groups * gic; }
  int oc() const { return groups * goc; }
};

// Generic grouped convolution: filter [oc, kh, kw, gic]. `in(x)` and `wt(v)` map stored values
// to real values, so the same loop serves fp32 and dequantised int8.
template <typename X, typename W, typename FX, typename FW>
std::vector<double> conv2d_ref(const Conv2dParams& p, const std::vector<X>& x,
                               const std::vector<W>& w, const std::vector<double>& bias, FX in,
                               FW wt) {
  const int oh = p.out_h(), ow = p.out_w();
  std::vector<double> y(static_cast<size_t>(p.n) * oh * ow * p.oc());
  for (int b = 0; b < p.n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int g = 0; g < p.groups; ++g)
          for (int o = 0; o < p.goc; ++o) {
            const int oc = g * p.goc + o;
            double acc = bias.empty() ? 0.0 : bias[oc];
            for (int ky = 0; ky < p.kh; ++ky) {
              const int iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
              if (iy < 0 || iy >= p.h) continue;
              for (int kx = 0; kx < p.kw; ++kx) {
                const int ix = ox * p.stride_w - p.pad_left + kx * p.dil_w;
                if (ix < 0 || ix >= p.w) continue;
                for (int c = 0; c < p.gic; ++c) {
                  const size_t xi =
                      ((static_cast<size_t>(b) * p.h + iy) * p.w + ix) * p.ic() + g * p.gic + c;
                  const size_t wi = ((static_cast<size_t>(oc) * p.kh + ky) * p.kw + kx) * p.gic + c;
                  acc += in(x[xi]) * wt(w[wi], oc);
                }
              }
            }
            y[((static_cast<size_t>(b) * oh + oy) * ow + ox) * p.oc() + oc] = acc;
          }
  return y;
}

// Depthwise: input [n, h, w, c], filter [1, kh, kw, c * m]; output channel o reads input
// channel o / m. Reuses Conv2dParams with groups = c, gic = 1, goc = m.
template <typename X, typename W, typename FX, typename FW>
std::vector<double> depthwise_ref(const Conv2dParams& p, const std::vector<X>& x,
                                  const std::vector<W>& w, const std::vector<double>& bias, FX in,
                                  FW wt) {
  // Re-lay the HWO filter as [oc, kh, kw, 1] and run the grouped reference.
  std::vector<W> wg(w.size());
  const int oc = p.oc();
  for (int o = 0; o < oc; ++o)
    for (int k = 0; k < p.kh * p.kw; ++k)
      wg[static_cast<size_t>(o) * p.kh * p.kw + k] = w[k * oc + o];
  return conv2d_ref(p, x, wg, bias, in, wt);
}

inline std::vector<double> fc_ref(const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& bias, int batch, int in_ch,
                                  int out_ch) {
  std::vector<double> y(static_cast<size_t>(batch) * out_ch);
  for (int b = 0; b < batch; ++b)
    for (int o = 0; o < out_ch; ++o) {
      double acc = bias.empty() ? 0.0 : bias[o];
      for (int i = 0; i < in_ch; ++i) {
        acc +=
            double{x[static_cast<size_t>(b) * in_ch + i]} * w[static_cast<size_t>(o) * in_ch + i];
      }
      y[static_cast<size_t>(b) * out_ch + o] = acc;
    }
  return y;
}

struct PoolParams {
  int n, h, w, c, kh, kw;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int out_h() const { return (h + pad_top + pad_bottom - kh) / stride_h + 1; }
  int out_w() const { return (w + pad_left + pad_right - kw) / stride_w + 1; }
};

// Max or average (over input pixels only) pooling, NHWC.
template <typename T>
std::vector<double> pool_ref(const PoolParams& p, const std::vector<T>& x, bool max) {
  const int oh = p.out_h(), ow = p.out_w();
  std::vector<double> y(static_cast<size_t>(p.n) * oh * ow * p.c);
  for (int b = 0; b < p.n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < p.c; ++c) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (int ky = 0; ky < p.kh; ++ky) {
            const int iy = oy * p.stride_h - p.pad_top + ky;
            if (iy < 0 || iy >= p.h) continue;
            for (int kx = 0; kx < p.kw; ++kx) {
              const int ix = ox * p.stride_w - p.pad_left + kx;
              if (ix < 0 || ix >= p.w) continue;
              const double v = x[((static_cast<size_t>(b) * p.h + iy) * p.w + ix) * p.c + c];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          y[((static_cast<size_t>(b) * oh + oy) * ow + ox) * p.c + c] = max ? acc : acc / count;
        }
  return y;
}

// Numpy-broadcast binary op over row-major shapes (output shape given).
template <typename F>
std::vector<double> broadcast_ref(const std::vector<double>& a, const std::vector<int>& ashape,
                                  const std::vector<double>& b, const std::vector<int>& bshape,
                                  const std::vector<int>& oshape, F op) {
  const size_t rank = oshape.size();
  auto index = [&](const std::vector<int>& shape, const std::vector<int>& coord) {
    size_t idx = 0;
    const size_t off = rank - shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      idx = idx * shape[d] + (shape[d] == 1 ? 0 : coord[d + off]);
    }
    return idx;
  };
  size_t total = 1;
  for (int d : oshape) total *= d;
  std::vector<double> y(total);
  std::vector<int> coord(rank, 0);
  for (size_t i = 0; i < total; ++i) {
    y[i] = op(a[index(ashape, coord)], b[index(bshape, coord)]);
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < oshape[d]) break;
      coord[d] = 0;
    }
  }
  return y;
}

inline std::vector<double> softmax_ref(const std::vector<float>& x, int channels) {
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / channels; ++row) {
    const float* in = &x[row * channels];
    double mx = in[0];
    for (int c = 1; c < channels; ++c) mx = std::max(mx, double{in[c]});
    double sum = 0;
    for (int c = 0; c < channels; ++c) sum += std::exp(in[c] - mx);
    for (int c = 0; c < channels; ++c) y[row * channels + c] = std::exp(in[c] - mx) / sum;
  }
  return y;
}

inline std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace pteron::xnnpack::testing
