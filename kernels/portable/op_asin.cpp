// aten::asin.out(Tensor self, *, Tensor(a!) out)
// out = arc sine; NaN outside [-1, 1], as in torch.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error asin_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::asin.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::asin(x); });
}

}  // namespace

PTERON_KERNEL("aten::asin.out", asin_out, "TT");

}  // namespace pteron
