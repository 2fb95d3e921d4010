// aten::acosh.out(Tensor self, *, Tensor(a!) out)
// out = inverse hyperbolic cosine; NaN below 1.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error acosh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::acosh.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::acosh(x); });
}

}  // namespace

PTERON_KERNEL("aten::acosh.out", acosh_out, "TT");

}  // namespace pteron
