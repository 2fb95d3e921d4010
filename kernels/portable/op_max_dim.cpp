// aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Maximum along dim and the position of its first occurrence (NaN counts as the max).
Error max_dim_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::max.dim_max";
  PTERON_TRY(check_args(kOp, args, "TIBTT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& values = *args[3]->tensor;
  Tensor& indices = *args[4]->tensor;
  PTERON_CHECK(values.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: values out has dtype %s, expected %s", kOp, scalar_type_name(values.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices out must be int64, got %s", kOp, scalar_type_name(indices.dtype()));
  uint32_t mask = 0;
  PTERON_TRY(dims_to_mask(kOp, &args[1]->i, 1, self.dim(), &mask));
  ReducePlan plan;
  Tensor* outs[2] = {&values, &indices};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 2, true, &plan));
  return arg_reduce<true>(kOp, self, &values, indices, plan);
}

}  // namespace

PTERON_KERNEL("aten::max.dim_max", max_dim_out);

}  // namespace pteron
