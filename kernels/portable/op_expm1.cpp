// aten::expm1.out(Tensor self, *, Tensor(a!) out)
// out = exp(x) - 1, accurate near 0.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error expm1_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::expm1.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::expm1(x); });
}

}  // namespace

PTERON_KERNEL("aten::expm1.out", expm1_out, "TT");

}  // namespace pteron
