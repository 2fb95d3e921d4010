// aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Min over `dim` ([] = every dim); NaN propagates. out has self's dtype.
Error amin_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::amin.out";
  PTERON_TRY(check_args(kOp, args, "TLBT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected %s", kOp, scalar_type_name(out.dtype()),
               scalar_type_name(self.dtype()));
  const Span<const int64_t> dims = args[1]->int_list;
  uint32_t mask = ~0u;
  if (!dims.empty()) PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1, true, &plan));
  return extreme_reduce<false>(kOp, self, out, plan);
}

}  // namespace

PTERON_KERNEL("aten::amin.out", amin_out);

}  // namespace pteron
