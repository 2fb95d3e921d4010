// aten::var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool
// keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!)) out0 = variance,
// out1 = mean over dim (None or [] = every dim); correction defaults to 1.
#include "kernels/portable/util/variance.h"

namespace pteron {
namespace {

Error var_mean_correction_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::var_mean.correction_out";
  const Tensor& self = *args[0]->tensor;
  uint32_t mask = 0;
  PTERON_TRY(optional_dims_mask(kOp, *args[1], self.dim(), &mask));
  const double correction = args[2]->is_none() ? 1.0 : args[2]->scalar_as_double();
  return variance_out(kOp, self, mask, correction, args[3]->b, *args[4]->tensor, args[5]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::var_mean.correction_out", var_mean_correction_out, "TlsBTT");

}  // namespace pteron
