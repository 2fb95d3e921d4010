// aten::min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// Minimum of every element into a 0-d out of self's dtype; NaN propagates and an empty self
// fails, as in torch.
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error min_unary_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::min.unary_out";
  PTERON_TRY(check_args(kOp, args, "TT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected %s", kOp, scalar_type_name(out.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(self.numel() > 0, Error::InvalidArgument,
               "%s: an empty tensor has no minimum (specify a dim)", kOp);
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, ~0u, false, outs, 1, true, &plan));
  return extreme_reduce<false>(kOp, self, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::min.unary_out", min_unary_out);

}  // namespace pteron
