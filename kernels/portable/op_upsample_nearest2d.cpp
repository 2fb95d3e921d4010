// aten::upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, float?
// scales_w=None, *, Tensor(a!) out) aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]?
// output_size, float[]? scale_factors, *, Tensor(a!) out) out[n, c, o...] = self[n, c, floor(o * in
// / out)...] (ATen's nearest_idx, in float); any dtype and dim order.
#include "kernels/portable/util/upsample.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error upsample_nearest2d_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_nearest2d.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[2], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  upsample_nearest_run(self, out, s, false);
  return Error::Ok;
}

Error upsample_nearest2d_vec_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::upsample_nearest2d.vec_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_vec(kOp, self, 2, *args[1], *args[2], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  upsample_nearest_run(self, out, s, false);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::upsample_nearest2d.out", upsample_nearest2d_out, "TLddT");
PTERON_KERNEL("aten::upsample_nearest2d.vec_out", upsample_nearest2d_vec_out, "Tl*T");

}  // namespace pteron
