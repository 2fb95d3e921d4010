// aten::min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// Minimum of every element into a 0-d out of self's dtype; NaN propagates and an empty self
// fails, as in torch (util/reduce_minmax.h).
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error min_unary_out(KernelContext&, Span<EValue*> args) {
  return max_min_unary_out<false>("aten::min.unary_out", args);
}

}  // namespace

PTERON_KERNEL("aten::min.unary_out", min_unary_out, "TT");

}  // namespace pteron
