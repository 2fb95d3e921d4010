// aten::max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// Maximum of every element into a 0-d out of self's dtype; NaN propagates and an empty self
// fails, as in torch (util/reduce_minmax.h).
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error max_unary_out(KernelContext&, Span<EValue*> args) {
  return max_min_unary_out<true>("aten::max.unary_out", args);
}

}  // namespace

PTERON_KERNEL("aten::max.unary_out", max_unary_out, "TT");

}  // namespace pteron
