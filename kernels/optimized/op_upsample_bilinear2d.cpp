// aten::upsample_bilinear2d.vec_out / .out, float32 row-major NCHW, both align_corners: the
// column taps (indices and weights, ATen's arithmetic as in the portable kernel) are computed
// once per call; each output row blends two horizontally interpolated input rows, which are
// kept in per-thread row buffers so consecutive output rows reuse them (a 2x upsample
// interpolates each input row once, not four times). The sums are the portable kernel's,
// (x00 w0 + x01 w1) h0 + (x10 w0 + x11 w1) h1, so results differ from it by at most FMA
// rounding. Rows are split over threads. Other dtypes and layouts run the portable kernel.
#include <cstring>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

struct ColumnTaps {
  const int32_t* i0;
  const int32_t* i1;
  const float* w0;
  const float* w1;
};

void interpolate_row(const float* row, const ColumnTaps& c, int64_t n, float* t) {
  for (int64_t j = 0; j < n; ++j) t[j] = row[c.i0[j]] * c.w0[j] + row[c.i1[j]] * c.w1[j];
}

// Two row buffers remembering which input row (plane * in_h + ih) each holds.
struct RowCache {
  float* buf[2];
  int64_t key[2] = {-1, -1};

  // The interpolated row `key`, computed unless cached; never evicts `keep`.
  const float* get(int64_t key_wanted, int64_t keep, const float* x, int64_t in_w,
                   const ColumnTaps& c, int64_t n) {
    for (int i = 0; i < 2; ++i)
      if (key[i] == key_wanted) return buf[i];
    const int slot = key[0] == keep ? 1 : 0;
    interpolate_row(x + key_wanted * in_w, c, n, buf[slot]);
    key[slot] = key_wanted;
    return buf[slot];
  }
};

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
  const int64_t blocks = opt::block_count(rows, out_w * 4);
  const size_t tap_bytes = static_cast<size_t>(out_w) * 16;
  const size_t row_bytes = static_cast<size_t>(out_w) * 4;
  char* scratch = static_cast<char*>(
      ctx.allocate_scratch(tap_bytes + static_cast<size_t>(blocks) * 2 * row_bytes + 64, 64));
  if (scratch == nullptr) return call_portable(op, ctx, args);
  int32_t* i0 = reinterpret_cast<int32_t*>(scratch);
  int32_t* i1 = i0 + out_w;
  float* w0 = reinterpret_cast<float*>(i1 + out_w);
  float* w1 = w0 + out_w;
  float* rowbufs = w1 + out_w;
  const float scale_w = upsample_area_scale<float>(s, 1, align_corners);
  for (int64_t j = 0; j < out_w; ++j) {
    const LinearTaps<float> t = upsample_linear_taps<float>(j, in_w, out_w, scale_w, align_corners);
    i0[j] = static_cast<int32_t>(t.i0);
    i1[j] = static_cast<int32_t>(t.i1);
    w0[j] = t.w0;
    w1[j] = t.w1;
  }
  const ColumnTaps cols{i0, i1, w0, w1};
  const float scale_h = upsample_area_scale<float>(s, 0, align_corners);
  const float* x = self.data<const float>();
  float* y = out.data<float>();
  opt::parallel_blocks(rows, blocks, [&](int64_t b, int64_t r0, int64_t r1) {
    RowCache cache{{rowbufs + b * 2 * out_w, rowbufs + (b * 2 + 1) * out_w}};
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = r / out_h, oh = r % out_h;
      const LinearTaps<float> t =
          upsample_linear_taps<float>(oh, in_h, out_h, scale_h, align_corners);
      const int64_t k0 = p * in_h + t.i0, k1 = p * in_h + t.i1;
      const float* a = cache.get(k0, k1, x, in_w, cols, out_w);
      const float* c = cache.get(k1, k0, x, in_w, cols, out_w);
      float* dst = y + r * out_w;
      const float h0 = t.w0, h1 = t.w1;
      for (int64_t j = 0; j < out_w; ++j) dst[j] = a[j] * h0 + c[j] * h1;
    }
  });
  return Error::Ok;
}

Error upsample_bilinear2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.vec_out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_vec(kOp, self, 2, *args[1], *args[3], &s));
  return run(kOp, ctx, args, s, args[2]->b, self, *args[4]->tensor);
}

Error upsample_bilinear2d_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  return run(kOp, ctx, args, s, args[2]->b, self, *args[5]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::upsample_bilinear2d.vec_out", upsample_bilinear2d_vec_out, "TlB*T");
PTERON_KERNEL("aten::upsample_bilinear2d.out", upsample_bilinear2d_out, "TLBddT");

}  // namespace pteron::optimized
