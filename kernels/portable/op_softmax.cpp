// aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/softmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error softmax_out_kernel(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_softmax.out";
  return softmax_out(kOp, *args[0]->tensor, args[1]->i, args[2]->b, *args[3]->tensor, false);
}

}  // namespace

PTERON_KERNEL("aten::_softmax.out", softmax_out_kernel, "TIBT");

}  // namespace pteron
