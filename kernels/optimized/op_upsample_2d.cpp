// aten::upsample_bilinear2d.vec_out / .out and aten::upsample_bicubic2d.out, float32 row-major
// NCHW, both align_corners. Both resizes are separable: the column taps (indices and weights,
// ATen's arithmetic as in the portable kernel) are computed once per call; each output row
// blends 2 (bilinear) or 4 (bicubic) horizontally interpolated input rows, which are kept in
// per-thread row buffers so consecutive output rows reuse them (a 2x upsample interpolates each
// input row once, not 4 or 16 times). The sums are the portable kernel's, each row
// sum_j x[i_j] w_j and then sum_k row_k h_k in tap order, so results differ from it by at most
// FMA rounding. Rows are split over threads. Other dtypes and layouts run the portable kernel.
#include <algorithm>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

// N taps per output index: where they read and their weights.
template <int N>
struct Taps {
  int64_t idx[N];
  float w[N];
};

template <int N>
Taps<N> taps_of(int64_t dst, int64_t in, int64_t out, float scale, bool align_corners) {
  if constexpr (N == 2) {
    const LinearTaps<float> t = upsample_linear_taps<float>(dst, in, out, scale, align_corners);
    return {{t.i0, t.i1}, {t.w0, t.w1}};
  } else {
    const CubicTaps<float> t = upsample_cubic_taps<float>(dst, in, scale, align_corners);
    return {{t.idx[0], t.idx[1], t.idx[2], t.idx[3]}, {t.w[0], t.w[1], t.w[2], t.w[3]}};
  }
}

// The column taps of every output column, tap-major (idx[k * n + j], w[k * n + j]).
template <int N>
struct ColumnTaps {
  const int32_t* idx;
  const float* w;
  int64_t n;

  void interpolate(const float* row, float* t) const {
    for (int64_t j = 0; j < n; ++j) {
      float acc = row[idx[j]] * w[j];
      for (int k = 1; k < N; ++k) acc += row[idx[k * n + j]] * w[k * n + j];
      t[j] = acc;
    }
  }
};

// N row buffers remembering which input row (plane * in_h + ih) each holds.
template <int N>
struct RowCache {
  float* buf[N];
  int64_t key[N];

  explicit RowCache(float* first, int64_t row_floats) {
    for (int i = 0; i < N; ++i) {
      buf[i] = first + i * row_floats;
      key[i] = -1;
    }
  }

  // The interpolated row `wanted`, computed unless held; never evicts a row in `needed` (the
  // rows the current output row reads, `wanted` among them, so a slot is always free).
  const float* get(int64_t wanted, const int64_t (&needed)[N], const float* x, int64_t in_w,
                   const ColumnTaps<N>& c) {
    for (int i = 0; i < N; ++i)
      if (key[i] == wanted) return buf[i];
    int slot = 0;
    while (slot < N - 1 && std::find(needed, needed + N, key[slot]) != needed + N) ++slot;
    c.interpolate(x + wanted * in_w, buf[slot]);
    key[slot] = wanted;
    return buf[slot];
  }
};

template <int N>
Error run(const char* op, KernelContext& ctx, Span<EValue*> args, const UpsampleShape& s,
          bool align_corners, const Tensor& self, Tensor& out) {
  PTERON_TRY(upsample_check_out(op, self, out, s));
  if (self.dtype() != ScalarType::Float || !is_row_major(self) || !is_row_major(out) ||
      s.in[0] * s.in[1] > INT32_MAX) {
    return call_portable(op, ctx, args);
  }
  if (out.numel() == 0) return Error::Ok;
  const int64_t in_h = s.in[0], in_w = s.in[1], out_h = s.out[0], out_w = s.out[1];
  const int64_t rows = static_cast<int64_t>(self.size(0)) * self.size(1) * out_h;
  const int64_t blocks = opt::block_count(rows, out_w * N * 2);
  const size_t tap_bytes = static_cast<size_t>(out_w) * N * 8;
  const size_t row_bytes = static_cast<size_t>(out_w) * 4;
  char* scratch = static_cast<char*>(
      ctx.allocate_scratch(tap_bytes + static_cast<size_t>(blocks) * N * row_bytes + 64, 64));
  if (scratch == nullptr) return call_portable(op, ctx, args);
  int32_t* idx = reinterpret_cast<int32_t*>(scratch);
  float* w = reinterpret_cast<float*>(idx + N * out_w);
  float* rowbufs = w + N * out_w;
  const float scale_w = upsample_area_scale<float>(s, 1, align_corners);
  for (int64_t j = 0; j < out_w; ++j) {
    const Taps<N> t = taps_of<N>(j, in_w, out_w, scale_w, align_corners);
    for (int k = 0; k < N; ++k) {
      idx[k * out_w + j] = static_cast<int32_t>(t.idx[k]);
      w[k * out_w + j] = t.w[k];
    }
  }
  const ColumnTaps<N> cols{idx, w, out_w};
  const float scale_h = upsample_area_scale<float>(s, 0, align_corners);
  const float* x = self.data<const float>();
  float* y = out.data<float>();
  opt::parallel_blocks(rows, blocks, [&](int64_t b, int64_t r0, int64_t r1) {
    RowCache<N> cache(rowbufs + b * N * out_w, out_w);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = r / out_h, oh = r % out_h;
      const Taps<N> t = taps_of<N>(oh, in_h, out_h, scale_h, align_corners);
      int64_t keys[N];
      for (int k = 0; k < N; ++k) keys[k] = p * in_h + t.idx[k];
      const float* src[N];
      for (int k = 0; k < N; ++k) src[k] = cache.get(keys[k], keys, x, in_w, cols);
      float* dst = y + r * out_w;
      for (int64_t j = 0; j < out_w; ++j) {
        float acc = src[0][j] * t.w[0];
        for (int k = 1; k < N; ++k) acc += src[k][j] * t.w[k];
        dst[j] = acc;
      }
    }
  });
  return Error::Ok;
}

Error upsample_bilinear2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.vec_out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_vec(kOp, self, 2, *args[1], *args[3], &s));
  return run<2>(kOp, ctx, args, s, args[2]->b, self, *args[4]->tensor);
}

Error upsample_bilinear2d_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  return run<2>(kOp, ctx, args, s, args[2]->b, self, *args[5]->tensor);
}

Error upsample_bicubic2d_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bicubic2d.out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  return run<4>(kOp, ctx, args, s, args[2]->b, self, *args[5]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::upsample_bilinear2d.vec_out", upsample_bilinear2d_vec_out, "TlB*T");
PTERON_KERNEL("aten::upsample_bilinear2d.out", upsample_bilinear2d_out, "TLBddT");
PTERON_KERNEL("aten::upsample_bicubic2d.out", upsample_bicubic2d_out, "TLBddT");

}  // namespace pteron::optimized
