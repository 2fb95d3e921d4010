// aten::upsample_bicubic2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float?
// scales_h=None, float? scales_w=None, *, Tensor(a!) out) Bicubic interpolation (A = -0.75, taps
// clamped to the input) as ATen's CPU kernel; floating dtypes and uint8 (rounded), any dim order.
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error upsample_bicubic2d_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bicubic2d.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  return upsample_interp_run(kOp, self, out, s, args[2]->b, UpsampleInterp::Cubic);
}

}  // namespace

PTERON_KERNEL("aten::upsample_bicubic2d.out", upsample_bicubic2d_out, "TLBddT");

}  // namespace pteron
