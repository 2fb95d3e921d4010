// aten::var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool
// keepdim=False, Tensor(a!) out) -> Tensor(a!) aten::var.out(Tensor self, int[1]? dim, bool
// unbiased=True, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/variance.h"

namespace pteron {
namespace {

// Variance over dim (None or [] = every dim); correction defaults to 1.
Error var_correction_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::var.correction_out";
  const Tensor& self = *args[0]->tensor;
  uint32_t mask = 0;
  PTERON_TRY(optional_dims_mask(kOp, *args[1], self.dim(), &mask));
  const double correction = args[2]->is_none() ? 1.0 : args[2]->scalar_as_double();
  return variance_out(kOp, self, mask, correction, args[3]->b, *args[4]->tensor, nullptr);
}

// The older overload: unbiased picks correction 1 or 0.
Error var_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::var.out";
  const Tensor& self = *args[0]->tensor;
  uint32_t mask = 0;
  PTERON_TRY(optional_dims_mask(kOp, *args[1], self.dim(), &mask));
  return variance_out(kOp, self, mask, args[2]->b ? 1.0 : 0.0, args[3]->b, *args[4]->tensor,
                      nullptr);
}

}  // namespace

PTERON_KERNEL("aten::var.correction_out", var_correction_out, "TlsBT");
PTERON_KERNEL("aten::var.out", var_out, "TlBBT");

}  // namespace pteron
