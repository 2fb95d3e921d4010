// aten::cosh.out(Tensor self, *, Tensor(a!) out)
// out = hyperbolic cosine (overflows to inf as torch does).
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error cosh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::cosh.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::cosh(x); });
}

}  // namespace

PTERON_KERNEL("aten::cosh.out", cosh_out, "TT");

}  // namespace pteron
