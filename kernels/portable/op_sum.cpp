// aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Sums over `dim` (None or [] = every dim). out's dtype sets the accumulator: float for
// float/half/bf16 (pairwise, so the error stays near float's precision), int64 for integers.
Error sum_intlist_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sum.IntList_out";
  PTERON_TRY(check_args(kOp, args, "TlBiT"));
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  if (!args[3]->is_none() && args[3]->i != static_cast<int64_t>(out.dtype())) {
    return fail(Error::InvalidArgument, "%s: dtype argument %lld does not match out's dtype %s",
                kOp, static_cast<long long>(args[3]->i), scalar_type_name(out.dtype()));
  }
  uint32_t mask = ~0u;
  if (!args[1]->is_none() && !args[1]->int_list.empty()) {
    const Span<const int64_t> dims = args[1]->int_list;
    PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  }
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(kOp, self, mask, args[2]->b, outs, 1, true, &plan));
  return accumulate_reduce(kOp, self, out, plan, 0,
                           [](auto a, auto b) { return add_values(a, b); });
}

}  // namespace

PTERON_KERNEL("aten::sum.IntList_out", sum_intlist_out);

}  // namespace pteron
