// aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error amax_out(KernelContext&, Span<EValue*> args) {
  return amax_amin_out<true>("aten::amax.out", args);
}

}  // namespace

PTERON_KERNEL("aten::amax.out", amax_out, "TLBT");

}  // namespace pteron
