// aten::upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float?
// scales_h=None, float? scales_w=None, *, Tensor(a!) out) aten::upsample_bilinear2d.vec_out(Tensor
// input, SymInt[]? output_size, bool align_corners, float[]? scale_factors,
//     *, Tensor(a!) out)
// Bilinear interpolation: weights and source indices as ATen's CPU kernel (in float; double
// for float64), H taps outermost; floating dtypes and uint8 (rounded), any dim order.
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error upsample_bilinear2d_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  return upsample_interp_run(kOp, self, out, s, args[2]->b, UpsampleInterp::Linear);
}

Error upsample_bilinear2d_vec_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_bilinear2d.vec_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_vec(kOp, self, 2, *args[1], *args[3], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  return upsample_interp_run(kOp, self, out, s, args[2]->b, UpsampleInterp::Linear);
}

}  // namespace

PTERON_KERNEL("aten::upsample_bilinear2d.out", upsample_bilinear2d_out, "TLBddT");
PTERON_KERNEL("aten::upsample_bilinear2d.vec_out", upsample_bilinear2d_vec_out, "TlB*T");

}  // namespace pteron
