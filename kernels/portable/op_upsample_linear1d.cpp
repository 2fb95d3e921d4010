// aten::upsample_linear1d.out(Tensor self, SymInt[1] output_size, bool align_corners, float?
// scales=None, *, Tensor(a!) out) Linear interpolation along the last dim (ATen's source index and
// lambda, in float; double for float64); floating dtypes and uint8, any dim order.
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error upsample_linear1d_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_linear1d.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 1, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  return upsample_interp_run(kOp, self, out, s, args[2]->b, UpsampleInterp::Linear);
}

}  // namespace

PTERON_KERNEL("aten::upsample_linear1d.out", upsample_linear1d_out, "TLBdT");

}  // namespace pteron
