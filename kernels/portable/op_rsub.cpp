// aten::rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
// out = other - alpha * self (sub with the operands swapped). Not defined for bool, as in torch;
// integers wrap like torch's.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/unary.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error rsub_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::rsub.Scalar_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  if (self.dtype() == ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: subtraction is not supported for bool tensors", kOp);
  }
  const ScalarArg other(*args[1]), alpha(*args[2]);
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  PTERON_TRY(check_scalar_fits_out(kOp, alpha, out));
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, self, out, [=](auto x) {
    using C = decltype(x);
    return wrapping_sub_scaled<C>(other.as<C>(), alpha.as<C>(), x);
  });
}

}  // namespace

PTERON_KERNEL("aten::rsub.Scalar_out", rsub_scalar_out, "TSST");

}  // namespace pteron
