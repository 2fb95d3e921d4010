// Depthwise convolution rows (DepthwiseRowArgs) and channel blocks (DepthwiseBlockArgs). Included
// by isa_impl.h inside PTERON_ISA's namespace, after what it uses there.
#pragma once

// Outputs [i, i + kLanes) of a depthwise row; 3x3 kernels with their nine weights in registers.
template <bool k3x3>
inline Vec depthwise_lanes(const DepthwiseRowArgs& r, const Vec* w9, int64_t i) {
  Vec acc = set1(r.bias);
  if (k3x3) {
    const float* r0 = r.rows + i;
    const float* r1 = r0 + r.row_step;
    const float* r2 = r1 + r.row_step;
    const int64_t o0 = r.off[0], o1 = r.off[1], o2 = r.off[2];
    acc = fma(w9[0], load(r0 + o0), acc);
    acc = fma(w9[1], load(r0 + o1), acc);
    acc = fma(w9[2], load(r0 + o2), acc);
    acc = fma(w9[3], load(r1 + o0), acc);
    acc = fma(w9[4], load(r1 + o1), acc);
    acc = fma(w9[5], load(r1 + o2), acc);
    acc = fma(w9[6], load(r2 + o0), acc);
    acc = fma(w9[7], load(r2 + o1), acc);
    acc = fma(w9[8], load(r2 + o2), acc);
    return acc;
  }
  for (int64_t kh = 0; kh < r.kernel_h; ++kh) {
    const float* row = r.rows + kh * r.row_step + i;
    for (int64_t kw = 0; kw < r.kernel_w; ++kw)
      acc = fma(set1(r.w[kh * r.kernel_w + kw]), load(row + r.off[kw]), acc);
  }
  return acc;
}

template <bool k3x3>
void depthwise_row_impl(const DepthwiseRowArgs& args, float lo, float hi) {
  Vec w9[9];
  if (k3x3)
    for (int k = 0; k < 9; ++k) w9[k] = set1(args.w[k]);
  const Vec vlo = set1(lo), vhi = set1(hi);
  DepthwiseRowArgs r = args;
  for (int64_t row = 0; row < args.count; ++row, r.rows += args.in_step, r.y += args.n) {
    int64_t i = 0;
    for (; i + kLanes <= r.n; i += kLanes)
      store(r.y + i, clamp_lanes(depthwise_lanes<k3x3>(r, w9, i), vlo, vhi));
    if (i < r.n) {
      // The last outputs as one more vector: its loads may run past the row's last tap, which
      // the rows' slack allows (kDepthwiseRowSlack >= kLanes); only outputs that exist are
      // stored.
      static_assert(kLanes <= kDepthwiseRowSlack, "the padded rows' slack must cover a vector");
      float last[kLanes];
      store(last, clamp_lanes(depthwise_lanes<k3x3>(r, w9, i), vlo, vhi));
      for (int64_t j = 0; i + j < r.n; ++j) r.y[i + j] = last[j];
    }
  }
}

void depthwise_row(const DepthwiseRowArgs& r, float lo, float hi) {
  if (r.kernel_h == 3 && r.kernel_w == 3) return depthwise_row_impl<true>(r, lo, hi);
  depthwise_row_impl<false>(r, lo, hi);
}

// P consecutive outputs of one row of a channel block: each weight vector is loaded once for
// the P pixels it multiplies.
constexpr int kBlockVecs = static_cast<int>(kDepthwiseBlock) / kLanes;
static_assert(kBlockVecs * kLanes == kDepthwiseBlock, "a channel block is whole vectors");

template <int P>
inline void depthwise_block_pixels(const DepthwiseBlockArgs& a, const float* x0, float* y, Vec vlo,
                                   Vec vhi) {
  constexpr int64_t B = kDepthwiseBlock;
  const int64_t pixel_step = a.stride_w * B;
  Vec acc[P][kBlockVecs];
  for (int v = 0; v < kBlockVecs; ++v) {
    const Vec b = load(a.bias + v * kLanes);
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  const float* w = a.w;
  for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
    const float* row = x0 + kh * a.dilation_h * a.tile_w * B;
    for (int64_t kw = 0; kw < a.kernel_w; ++kw, w += B) {
      const float* x = row + kw * a.dilation_w * B;
      for (int v = 0; v < kBlockVecs; ++v) {
        const Vec wv = load(w + v * kLanes);
        for (int p = 0; p < P; ++p)
          acc[p][v] = fma(wv, load(x + p * pixel_step + v * kLanes), acc[p][v]);
      }
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < kBlockVecs; ++v)
      store(y + p * B + v * kLanes, clamp_lanes(acc[p][v], vlo, vhi));
}

void depthwise_block(const DepthwiseBlockArgs& a, float lo, float hi) {
  constexpr int64_t B = kDepthwiseBlock;
  // Four pixels at a time keep 4 * kBlockVecs accumulators in registers (16 on NEON and AVX2).
  constexpr int kPixels = 4;
  const Vec vlo = set1(lo), vhi = set1(hi);
  for (int64_t oh = 0; oh < a.out_h; ++oh) {
    const float* row = a.tile + oh * a.stride_h * a.tile_w * B;
    float* y = a.y + oh * a.out_w * B;
    int64_t ow = 0;
    for (; ow + kPixels <= a.out_w; ow += kPixels)
      depthwise_block_pixels<kPixels>(a, row + ow * a.stride_w * B, y + ow * B, vlo, vhi);
    for (; ow < a.out_w; ++ow)
      depthwise_block_pixels<1>(a, row + ow * a.stride_w * B, y + ow * B, vlo, vhi);
  }
}
