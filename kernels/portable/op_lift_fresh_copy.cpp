// aten::lift_fresh_copy.out(Tensor self, *, Tensor(a!) out)
// out = a copy of self (export's marker for a tensor constant made inside forward), into out's
// own dim order.
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error lift_fresh_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::lift_fresh_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return copy_same_dtype(kOp, self, out);
}

}  // namespace

PTERON_KERNEL("aten::lift_fresh_copy.out", lift_fresh_copy_out, "TT");

}  // namespace pteron
