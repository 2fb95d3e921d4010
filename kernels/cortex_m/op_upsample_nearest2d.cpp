// cortex_m::upsample_nearest2d_nhwc.out(Tensor input, Tensor indices, *, Tensor(a!) out)
//
// pteron's own op: nearest-neighbour upsampling (or downsampling) of int8 NHWC, out[n, oy, ox, :]
// = input[n, indices[oy], indices[OH + ox], :] (util/upsample_taps.h: the table the lowering
// computes with torch's nearest / nearest-exact formula). Input and output share quantisation
// parameters (the lowering adds a cortex_m::requantize when they differ), so it copies bytes:
// each output pixel is its source pixel's C channels, and an output row reading the same input
// row as the one above it is a copy of that row (every second row of a 2x upsample). The MVE
// path copies 16 bytes a step with tail predication.
#include <cstring>

#include "kernels/cortex_m/util/path.h"
#include "kernels/cortex_m/util/upsample_taps.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::upsample_nearest2d_nhwc.out";

void copy_scalar(int8_t* dst, const int8_t* src, int32_t n) {
  for (int32_t i = 0; i < n; ++i) dst[i] = src[i];
}

#if PTERON_CORTEX_M_MVE
void copy_mve(int8_t* dst, const int8_t* src, int32_t n) {
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    vstrbq_p_s8(dst + i, vldrbq_z_s8(src + i, p), p);
  }
}
#endif

Error upsample_nearest2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTT"));
  const Tensor& in = *args[0]->tensor;
  const Tensor& table = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_upsample(kOp, in, table, 1, out));
  void (*copy)(int8_t*, const int8_t*, int32_t) = copy_scalar;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) copy = copy_mve;
#endif
  const int32_t h = in.size(1), w = in.size(2), c = in.size(3);
  const int32_t oh = out.size(1), ow = out.size(2);
  const int32_t* rows = table.data<const int32_t>();
  const int32_t* cols = rows + oh;
  const int8_t* x = in.data<const int8_t>();
  int8_t* y = out.data<int8_t>();
  const int32_t row_bytes = ow * c;
  for (int32_t n = 0; n < in.size(0); ++n) {
    const int8_t* image = x + static_cast<int64_t>(n) * h * w * c;
    for (int32_t oy = 0; oy < oh; ++oy, y += row_bytes) {
      if (oy > 0 && rows[oy] == rows[oy - 1]) {
        copy(y, y - row_bytes, row_bytes);
        continue;
      }
      const int8_t* src = image + static_cast<int64_t>(rows[oy]) * w * c;
      for (int32_t ox = 0; ox < ow; ++ox) copy(y + ox * c, src + cols[ox] * c, c);
    }
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::upsample_nearest2d_nhwc.out", upsample_nearest2d_nhwc_out);

}  // namespace pteron::cortex_m
