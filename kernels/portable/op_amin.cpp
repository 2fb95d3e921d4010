// aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error amin_out(KernelContext&, Span<EValue*> args) {
  return amax_amin_out<false>("aten::amin.out", args);
}

}  // namespace

PTERON_KERNEL("aten::amin.out", amin_out, "TLBT");

}  // namespace pteron
