// aten::squeeze_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/squeeze.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Removes every size-1 dim.
Error squeeze_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::squeeze_copy.out";
  return squeeze_copy(kOp, *args[0]->tensor, ~0u, *args[1]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::squeeze_copy.out", squeeze_copy_out, "TT");

}  // namespace pteron
