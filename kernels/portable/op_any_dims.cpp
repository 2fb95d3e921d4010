// aten::any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/reduce_any.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// None reduces every dim; an empty list (unlike sum's) reduces none, as in torch.
Error any_dims_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::any.dims_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  uint32_t mask = ~0u;
  if (!args[1]->is_none()) {
    const Span<const int64_t> dims = args[1]->int_list;
    PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  }
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1, true, &plan));
  return any_reduce(kOp, self, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::any.dims_out", any_dims_out, "TlBT");

}  // namespace pteron
