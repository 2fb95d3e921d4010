// aten::prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Product of every element.
Error prod_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::prod.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(args[1]->is_none() || args[1]->i == static_cast<int64_t>(out.dtype()),
               Error::InvalidArgument, "%s: dtype argument does not match out's dtype %s", kOp,
               scalar_type_name(out.dtype()));
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, ~0u, false, outs, 1, true, &plan));
  return accumulate_reduce(kOp, self, out, plan, 1,
                           [](auto a, auto b) { return mul_values(a, b); });
}

}  // namespace

PTERON_KERNEL("aten::prod.out", prod_out, "TiT");

}  // namespace pteron
