// aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
//     -> Tensor(a!)
#include "kernels/portable/util/softmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error log_softmax_out_kernel(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_log_softmax.out";
  return softmax_out(kOp, *args[0]->tensor, args[1]->i, args[2]->b, *args[3]->tensor, true);
}

}  // namespace

PTERON_KERNEL("aten::_log_softmax.out", log_softmax_out_kernel, "TIBT");

}  // namespace pteron
