// aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
//
// Position of the first minimum along `dim`, or in the flattened tensor when dim is None.
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error argmin_out(KernelContext&, Span<EValue*> args) {
  return argmax_argmin_out<false>("aten::argmin.out", args);
}

}  // namespace

PTERON_KERNEL("aten::argmin.out", argmin_out, "TiBT");

}  // namespace pteron
