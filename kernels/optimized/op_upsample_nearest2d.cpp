// aten::upsample_nearest2d.vec_out / .out, row-major NCHW, any dtype (elements are copied):
// the source column of each output column is computed once per call (ATen's nearest_idx, as the
// portable kernel), output rows are split over threads, and an output row reading the same
// input row as the one above it is a memcpy of that row (every second row of a 2x upsample).
// Other layouts and malformed arguments run the portable kernel.
#include <cstring>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

template <typename W>
void nearest_rows(const Tensor& self, Tensor& out, const UpsampleShape& s, const int32_t* cols) {
  const W* x = static_cast<const W*>(self.const_data());
  W* y = static_cast<W*>(out.mutable_data());
  const int64_t in_h = s.in[0], in_w = s.in[1], out_h = s.out[0], out_w = s.out[1];
  const float scale_h = upsample_scale<float>(s, 0);
  const int64_t rows = static_cast<int64_t>(self.size(0)) * self.size(1) * out_h;
  const bool twice = out_w == 2 * in_w;
  opt::parallel_blocks(rows, opt::block_count(rows, out_w), [&](int64_t, int64_t r0, int64_t r1) {
    int64_t prev_src = -1;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = r / out_h, oh = r % out_h;
      const int64_t ih = upsample_nearest_index(oh, in_h, out_h, scale_h, false);
      const int64_t src = p * in_h + ih;
      W* dst = y + r * out_w;
      if (src == prev_src) {
        std::memcpy(dst, dst - out_w, static_cast<size_t>(out_w) * sizeof(W));
        continue;
      }
      prev_src = src;
      const W* row = x + src * in_w;
      if (twice) {
        for (int64_t j = 0; j < in_w; ++j) dst[2 * j] = dst[2 * j + 1] = row[j];
      } else {
        for (int64_t j = 0; j < out_w; ++j) dst[j] = row[cols[j]];
      }
    }
  });
}

Error run(const char* op, KernelContext& ctx, Span<EValue*> args, const UpsampleShape& s,
          const Tensor& self, Tensor& out) {
  PTERON_TRY(upsample_check_out(op, self, out, s));
  if (!is_row_major(self) || !is_row_major(out) || s.in[0] * s.in[1] > INT32_MAX) {
    return call_portable(op, ctx, args);
  }
  if (out.numel() == 0) return Error::Ok;
  int32_t* cols =
      static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(s.out[1]) * 4, 64));
  if (cols == nullptr) return call_portable(op, ctx, args);
  const float scale_w = upsample_scale<float>(s, 1);
  for (int64_t j = 0; j < s.out[1]; ++j) {
    cols[j] = static_cast<int32_t>(upsample_nearest_index(j, s.in[1], s.out[1], scale_w, false));
  }
  switch (self.element_size()) {
    case 1:
      nearest_rows<uint8_t>(self, out, s, cols);
      break;
    case 2:
      nearest_rows<uint16_t>(self, out, s, cols);
      break;
    case 4:
      nearest_rows<uint32_t>(self, out, s, cols);
      break;
    default:
      nearest_rows<uint64_t>(self, out, s, cols);
      break;
  }
  return Error::Ok;
}

Error upsample_nearest2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_nearest2d.vec_out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_vec(kOp, self, 2, *args[1], *args[2], &s));
  return run(kOp, ctx, args, s, self, *args[3]->tensor);
}

Error upsample_nearest2d_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_nearest2d.out";
  UpsampleShape s;
  const Tensor& self = *args[0]->tensor;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[2], &s));
  return run(kOp, ctx, args, s, self, *args[4]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::upsample_nearest2d.vec_out", upsample_nearest2d_vec_out, "Tl*T");
PTERON_KERNEL("aten::upsample_nearest2d.out", upsample_nearest2d_out, "TLddT");

}  // namespace pteron::optimized
