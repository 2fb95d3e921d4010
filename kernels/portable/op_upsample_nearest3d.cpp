// aten::upsample_nearest3d.out(Tensor self, SymInt[3] output_size, float? scales_d=None, float?
// scales_h=None, float? scales_w=None, *, Tensor(a!) out) out[n, c, o...] = self[n, c, floor(o * in
// / out)...] (ATen's nearest_idx, in float); any dtype and dim order.
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error upsample_nearest3d_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_nearest3d.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 3, *args[1], &args[2], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  upsample_nearest_run(self, out, s, false);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::upsample_nearest3d.out", upsample_nearest3d_out, "TLdddT");

}  // namespace pteron
