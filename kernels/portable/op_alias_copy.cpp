// aten::alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Copies into out's own dim order, whatever self's.
Error alias_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::alias_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return copy_same_dtype(kOp, self, out);
}

}  // namespace

PTERON_KERNEL("aten::alias_copy.out", alias_copy_out, "TT");

}  // namespace pteron
