// aten::prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None,
// Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Product along dim; integers multiply in int64 (wrapping), floats in float.
Error prod_int_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::prod.int_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(args[3]->is_none() || args[3]->i == static_cast<int64_t>(out.dtype()),
               Error::InvalidArgument, "%s: dtype argument does not match out's dtype %s", kOp,
               scalar_type_name(out.dtype()));
  uint32_t mask = 0;
  PTERON_TRY(dims_to_mask(kOp, &args[1]->i, 1, self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1, true, &plan));
  return accumulate_reduce(kOp, self, out, plan, 1,
                           [](auto a, auto b) { return mul_values(a, b); });
}

}  // namespace

PTERON_KERNEL("aten::prod.int_out", prod_int_out, "TIBiT");

}  // namespace pteron
