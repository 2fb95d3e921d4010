// cortex_m::upsample_nearest2d_nhwc.out(Tensor input, Tensor indices, *, Tensor(a!) out)
//
// pteron's own op: nearest-neighbour upsampling (or downsampling) of int8 NHWC, out[n, oy, ox, :]
// = input[n, indices[oy], indices[OH + ox], :] (util/upsample_taps.h: the table the lowering
// computes with torch's nearest / nearest-exact formula). Input and output share quantisation
// parameters (the lowering adds a cortex_m::requantize when they differ), so it copies bytes:
// each output pixel is its source pixel's C channels, and an output row reading the same input
// row as the one above it is a copy of that row (every second row of a 2x upsample). One path:
// see copy() for why MVE builds need no intrinsics here.
#include "kernels/cortex_m/util/upsample_taps.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::upsample_nearest2d_nhwc.out";

// A byte copy, the same code on both paths: GCC vectorises this loop for MVE builds
// (tail-predicated low-overhead loops), which measured 0.70 instructions per output byte for a
// 2x upsample of 16x16x32 under QEMU, against 1.09 with explicit VLDRB/VSTRB intrinsics.
inline void copy(int8_t* dst, const int8_t* src, int32_t n) {
  for (int32_t i = 0; i < n; ++i) dst[i] = src[i];
}

void upsample(const Tensor& in, const int32_t* rows, Tensor& out) {
  const int32_t h = in.size(1), w = in.size(2), c = in.size(3);
  const int32_t oh = out.size(1), ow = out.size(2);
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
}

Error upsample_nearest2d_nhwc_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& table = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_upsample(kOp, in, table, 1, out));
  upsample(in, table.data<const int32_t>(), out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::upsample_nearest2d_nhwc.out", upsample_nearest2d_nhwc_out, "TTT");

}  // namespace pteron::cortex_m
