// aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
//
// Position of the first maximum along `dim`, or in the flattened tensor when dim is None.
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error argmax_out(KernelContext&, Span<EValue*> args) {
  return argmax_argmin_out<true>("aten::argmax.out", args);
}

}  // namespace

PTERON_KERNEL("aten::argmax.out", argmax_out, "TiBT");

}  // namespace pteron
