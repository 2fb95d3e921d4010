// aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Position of the first minimum along `dim`, or in the flattened tensor when dim is None.
Error argmin_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::argmin.out";
  PTERON_TRY(check_args(kOp, args, "TiBT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(out.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: out must be int64, got %s", kOp, scalar_type_name(out.dtype()));
  uint32_t mask = ~0u;
  if (!args[1]->is_none()) {
    PTERON_TRY(dims_to_mask(kOp, &args[1]->i, 1, self.dim(), &mask));
  }
  // A flat position over several dims must count in logical order, not memory order.
  const bool all_dims = args[1]->is_none();
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1,
                              !all_dims || self.is_contiguous(), &plan));
  return arg_reduce<false>(kOp, self, nullptr, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::argmin.out", argmin_out);

}  // namespace pteron
