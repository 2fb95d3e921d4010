// aten::asinh.out(Tensor self, *, Tensor(a!) out)
// out = inverse hyperbolic sine.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error asinh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::asinh.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::asinh(x); });
}

}  // namespace

PTERON_KERNEL("aten::asinh.out", asinh_out, "TT");

}  // namespace pteron
