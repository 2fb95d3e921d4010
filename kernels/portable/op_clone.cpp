// aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Copies into out's own dim order, whatever self's. memory_format is ignored: out's
// dim order, chosen by the memory planner, is the layout that counts.
Error clone_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::clone.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  return copy_same_dtype(kOp, self, out);
}

}  // namespace

PTERON_KERNEL("aten::clone.out", clone_out, "TiT");

}  // namespace pteron
