// aten::any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_any.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error any_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::any.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  uint32_t mask = 0;
  PTERON_TRY(dims_to_mask(kOp, &args[1]->i, 1, self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1, true, &plan));
  return any_reduce(kOp, self, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::any.out", any_out, "TIBT");

}  // namespace pteron
