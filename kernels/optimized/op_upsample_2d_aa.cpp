// aten::_upsample_bilinear2d_aa.out and _upsample_bicubic2d_aa.out (antialiased resizes), float32
// row-major NCHW: the portable kernel's separable windows and weights (util/upsample_separable.h)
// computed once per call into tables, then per plane the W pass into a per-thread buffer [in_h,
// out_w] and the H pass from it, vectorised across output columns, instead of the portable kernel's
// W pass recomputed for every output. The same sums in the same order (within FMA rounding of the
// portable kernel). Planes split over threads. Other dtypes and layouts run the portable kernel.
#include <algorithm>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/upsample.h"
#include "kernels/portable/util/upsample_separable.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

// Windows of one dim: output i reads input [min[i], min[i] + size[i]) with weights
// w[i * taps + j]; identity dims (size unchanged) are copied.
struct WindowTable {
  int32_t* min;
  int32_t* size;
  float* w;
  int64_t taps = 0;
  bool identity = false;
};

// Largest window of a dim (the table's row stride).
int64_t max_taps(int64_t in, int64_t out, float scale, SeparableFilter filter) {
  int64_t taps = 1;
  for (int64_t i = 0; i < out; ++i) {
    const SeparableWindow<float> w = separable_window<float>(i, in, out, scale, filter, true, 0.0f);
    taps = std::max(taps, w.size);
  }
  return taps;
}

void fill_table(WindowTable& t, int64_t in, int64_t out, float scale, SeparableFilter filter) {
  t.identity = in == out;
  for (int64_t i = 0; i < out; ++i) {
    const SeparableWindow<float> w = separable_window<float>(i, in, out, scale, filter, true, 0.0f);
    t.min[i] = static_cast<int32_t>(w.min);
    t.size[i] = static_cast<int32_t>(w.size > 0 ? w.size : 0);
    for (int64_t j = 0; j < t.taps; ++j) t.w[i * t.taps + j] = j < w.size ? w.weight(j) : 0.0f;
  }
}

Error upsample_2d_aa_out(const char* op, SeparableFilter filter, KernelContext& ctx,
                         Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(op, self, 2, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(op, self, out, s));
  if (self.dtype() != ScalarType::Float || !is_row_major(self) || !is_row_major(out)) {
    return call_portable(op, ctx, args);
  }
  if (out.numel() == 0) return Error::Ok;
  const bool align_corners = args[2]->b;
  const int64_t in_h = s.in[0], in_w = s.in[1], out_h = s.out[0], out_w = s.out[1];
  const float scale_h = upsample_area_scale<float>(s, 0, align_corners);
  const float scale_w = upsample_area_scale<float>(s, 1, align_corners);
  WindowTable th, tw;
  th.taps = max_taps(in_h, out_h, scale_h, filter);
  tw.taps = max_taps(in_w, out_w, scale_w, filter);
  const int64_t planes = static_cast<int64_t>(self.size(0)) * self.size(1);
  const int64_t blocks = opt::block_count(planes, out_h * out_w * (th.taps + tw.taps));
  const size_t table_bytes =
      static_cast<size_t>(out_h * (8 + 4 * th.taps) + out_w * (8 + 4 * tw.taps));
  const size_t temp_floats = static_cast<size_t>(in_h * out_w);
  char* scratch = static_cast<char*>(
      ctx.allocate_scratch(table_bytes + static_cast<size_t>(blocks) * temp_floats * 4 + 256, 64));
  if (scratch == nullptr) return call_portable(op, ctx, args);
  float* temps = reinterpret_cast<float*>(scratch);
  char* p = scratch + static_cast<size_t>(blocks) * temp_floats * 4;
  th.w = reinterpret_cast<float*>(p);
  p += out_h * th.taps * 4;
  tw.w = reinterpret_cast<float*>(p);
  p += out_w * tw.taps * 4;
  th.min = reinterpret_cast<int32_t*>(p);
  th.size = th.min + out_h;
  tw.min = th.size + out_h;
  tw.size = tw.min + out_w;
  fill_table(th, in_h, out_h, scale_h, filter);
  fill_table(tw, in_w, out_w, scale_w, filter);
  const float* x = self.data<const float>();
  float* y = out.data<float>();
  opt::parallel_blocks(planes, blocks, [&](int64_t b, int64_t p0, int64_t p1) {
    float* temp = temps + b * static_cast<int64_t>(temp_floats);
    for (int64_t pl = p0; pl < p1; ++pl) {
      const float* plane = x + pl * in_h * in_w;
      // W pass: temp[ih][ow] (or the input itself when W keeps its size).
      const float* rows = plane;
      int64_t row_stride = in_w;
      if (!tw.identity) {
        for (int64_t ih = 0; ih < in_h; ++ih) {
          const float* r = plane + ih * in_w;
          float* t = temp + ih * out_w;
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const int32_t n = tw.size[ow];
            if (n == 0) {
              t[ow] = 0.0f;
              continue;
            }
            const float* src = r + tw.min[ow];
            const float* wt = tw.w + ow * tw.taps;
            float acc = src[0] * wt[0];
            for (int32_t j = 1; j < n; ++j) acc += src[j] * wt[j];
            t[ow] = acc;
          }
        }
        rows = temp;
        row_stride = out_w;
      }
      // H pass, vectorised across the output row.
      float* oplane = y + pl * out_h * out_w;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        float* dst = oplane + oh * out_w;
        if (th.identity) {
          std::copy(rows + oh * row_stride, rows + oh * row_stride + out_w, dst);
          continue;
        }
        const int32_t n = th.size[oh];
        if (n == 0) {
          std::fill(dst, dst + out_w, 0.0f);
          continue;
        }
        const float* wt = th.w + oh * th.taps;
        const float* r0 = rows + th.min[oh] * row_stride;
        for (int64_t ow = 0; ow < out_w; ++ow) dst[ow] = r0[ow] * wt[0];
        for (int32_t i = 1; i < n; ++i) {
          const float* r = r0 + i * row_stride;
          const float wi = wt[i];
          for (int64_t ow = 0; ow < out_w; ++ow) dst[ow] += r[ow] * wi;
        }
      }
    }
  });
  return Error::Ok;
}

Error upsample_bilinear2d_aa_out(KernelContext& ctx, Span<EValue*> args) {
  return upsample_2d_aa_out("aten::_upsample_bilinear2d_aa.out", SeparableFilter::Linear, ctx,
                            args);
}

Error upsample_bicubic2d_aa_out(KernelContext& ctx, Span<EValue*> args) {
  return upsample_2d_aa_out("aten::_upsample_bicubic2d_aa.out", SeparableFilter::Cubic, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::_upsample_bilinear2d_aa.out", upsample_bilinear2d_aa_out, "TLBddT");
PTERON_KERNEL("aten::_upsample_bicubic2d_aa.out", upsample_bicubic2d_aa_out, "TLBddT");

}  // namespace pteron::optimized
