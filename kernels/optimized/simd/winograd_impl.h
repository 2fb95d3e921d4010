// Winograd F(4x4, 3x3) tile transforms (Lavin & Gray, points 0, +-1, +-2, inf), written once
// over Vec (vec.h) and vectorised across channels: each of a tile's 36 (or 16) elements is a
// row of `n` contiguous channel values. Included by isa_impl.h inside PTERON_ISA's namespace;
// the convolution around them is kernels/optimized/util/winograd.cpp.
#pragma once

#define PTERON_WINO_INLINE inline __attribute__((always_inline))

namespace winograd_detail {

// y = B^T x for one 6-vector (B^T's rows: [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0],
// [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1]).
PTERON_WINO_INLINE void input_1d(const Vec* x, int step, Vec* y, int ystep) {
  const Vec four = set1(4.0f), five = set1(5.0f), two = set1(2.0f);
  const Vec x0 = x[0], x1 = x[step], x2 = x[2 * step], x3 = x[3 * step], x4 = x[4 * step],
            x5 = x[5 * step];
  const Vec a = x4 - four * x2;  // shared by rows 1, 2
  const Vec b = x3 - four * x1;
  const Vec c = x4 - x2;  // rows 3, 4
  const Vec d = two * (x3 - x1);
  y[0] = fma(four, x0, x4) - five * x2;
  y[ystep] = a + b;
  y[2 * ystep] = a - b;
  y[3 * ystep] = c + d;
  y[4 * ystep] = c - d;
  y[5 * ystep] = fma(four, x1, x5) - five * x3;
}

// y = A^T m for one 6-vector (A^T's rows: [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0],
// [0 1 -1 8 -8 1]).
PTERON_WINO_INLINE void output_1d(const Vec* m, int step, Vec* y, int ystep) {
  const Vec two = set1(2.0f), four = set1(4.0f), eight = set1(8.0f);
  const Vec s12 = m[step] + m[2 * step], d12 = m[step] - m[2 * step];
  const Vec s34 = m[3 * step] + m[4 * step], d34 = m[3 * step] - m[4 * step];
  y[0] = m[0] + s12 + s34;
  y[ystep] = fma(two, d34, d12);
  y[2 * ystep] = fma(four, s34, s12);
  y[3 * ystep] = fma(eight, d34, d12) + m[5 * step];
}

// One group of kLanes channels: d[i][j] at d + i * row + j * col.
PTERON_WINO_INLINE void input_tile(const float* d, int64_t row, int64_t col, float* v,
                                   int64_t v_stride) {
  Vec x[36], t[36];
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) x[i * 6 + j] = load(d + i * row + j * col);
  }
  for (int j = 0; j < 6; ++j) input_1d(x + j, 6, t + j, 6);          // columns: B^T d
  for (int i = 0; i < 6; ++i) input_1d(t + i * 6, 1, x + i * 6, 1);  // rows: (B^T d) B
  for (int e = 0; e < 36; ++e) store(v + e * v_stride, x[e]);
}

PTERON_WINO_INLINE void output_tile(const float* m, int64_t m_stride, Vec bias, bool relu, float* y,
                                    int64_t row, int64_t col) {
  Vec x[36], t[24], o[16];
  for (int e = 0; e < 36; ++e) x[e] = load(m + e * m_stride);
  for (int j = 0; j < 6; ++j) output_1d(x + j, 6, t + j, 6);          // A^T m: 4 x 6
  for (int i = 0; i < 4; ++i) output_1d(t + i * 6, 1, o + i * 4, 1);  // (A^T m) A: 4 x 4
  const Vec zero = set1(0.0f);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      Vec r = o[i * 4 + j] + bias;
      if (relu) r = select_gt(zero, r, zero, r);  // NaN stays NaN, as torch.relu
      store(y + i * row + j * col, r);
    }
  }
}

}  // namespace winograd_detail

#undef PTERON_WINO_INLINE

// The channels past the last whole vector go through a zero-padded local copy, so there is one
// arithmetic path (and the same rounding) for all of them.
void winograd_input(const float* d, int64_t row, int64_t col, float* v, int64_t v_stride,
                    int64_t n) {
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    winograd_detail::input_tile(d + c, row, col, v + c, v_stride);
  }
  if (c == n) return;
  float in[36 * kLanes] = {}, out[36 * kLanes];
  for (int e = 0; e < 36; ++e) {
    for (int64_t k = c; k < n; ++k) in[e * kLanes + (k - c)] = d[e / 6 * row + e % 6 * col + k];
  }
  winograd_detail::input_tile(in, 6 * kLanes, kLanes, out, kLanes);
  for (int e = 0; e < 36; ++e) {
    for (int64_t k = c; k < n; ++k) v[e * v_stride + k] = out[e * kLanes + (k - c)];
  }
}

void winograd_output(const float* m, int64_t m_stride, const float* bias, bool relu, float* y,
                     int64_t row, int64_t col, int64_t n) {
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    winograd_detail::output_tile(m + c, m_stride, bias ? load(bias + c) : set1(0.0f), relu, y + c,
                                 row, col);
  }
  if (c == n) return;
  float in[36 * kLanes] = {}, b[kLanes] = {}, out[16 * kLanes];
  for (int e = 0; e < 36; ++e) {
    for (int64_t k = c; k < n; ++k) in[e * kLanes + (k - c)] = m[e * m_stride + k];
  }
  if (bias) {
    for (int64_t k = c; k < n; ++k) b[k - c] = bias[k];
  }
  winograd_detail::output_tile(in, kLanes, load(b), relu, out, 4 * kLanes, kLanes);
  for (int e = 0; e < 16; ++e) {
    for (int64_t k = c; k < n; ++k) y[e / 4 * row + e % 4 * col + k] = out[e * kLanes + (k - c)];
  }
}
