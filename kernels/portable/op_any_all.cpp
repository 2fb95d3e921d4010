// aten::any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_any.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error any_all_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::any.all_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, ~0u, false, outs, 1, true, &plan));
  return any_reduce(kOp, self, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::any.all_out", any_all_out, "TT");

}  // namespace pteron
