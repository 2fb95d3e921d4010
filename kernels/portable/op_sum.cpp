// aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
// Tensor(a!) out) -> Tensor(a!) aten::sum.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!)
// out) -> Tensor(a!)
#include "kernels/portable/util/reduce_fold.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Sums over `dim` (None or [] = every dim). out's dtype sets the accumulator: float for
// float/half/bf16 (pairwise, so the error stays near float's precision), int64 for integers.
Error check_dtype_arg(const char* op, const EValue& dtype, const Tensor& out) {
  if (!dtype.is_none() && dtype.i != static_cast<int64_t>(out.dtype())) {
    return fail(Error::InvalidArgument, "%s: dtype argument %lld does not match out's dtype %s", op,
                static_cast<long long>(dtype.i), scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

Error sum_over(const char* op, const Tensor& self, uint32_t mask, bool keepdim, Tensor& out) {
  ReducePlan plan;
  Tensor* outs[1] = {&out};
  PTERON_TRY(make_reduce_plan(op, self, mask, keepdim, outs, 1, true, &plan));
  return accumulate_reduce(op, self, out, plan, 0, [](auto a, auto b) { return add_values(a, b); });
}

Error sum_intlist_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sum.IntList_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(check_dtype_arg(kOp, *args[3], out));
  uint32_t mask = ~0u;
  if (!args[1]->is_none() && !args[1]->int_list.empty()) {
    const Span<const int64_t> dims = args[1]->int_list;
    PTERON_TRY(dims_to_mask(kOp, dims.data(), dims.size(), self.dim(), &mask));
  }
  return sum_over(kOp, self, mask, args[2]->b, out);
}

// The sum of every element (a 0-d out).
Error sum_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sum.out";
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_dtype_arg(kOp, *args[1], out));
  return sum_over(kOp, *args[0]->tensor, ~0u, false, out);
}

}  // namespace

PTERON_KERNEL("aten::sum.IntList_out", sum_intlist_out, "TlBiT");
PTERON_KERNEL("aten::sum.out", sum_out, "TiT");

}  // namespace pteron
