// aten::atanh.out(Tensor self, *, Tensor(a!) out)
// out = inverse hyperbolic tangent; +-inf at +-1, NaN beyond.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error atanh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::atanh.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::atanh(x); });
}

}  // namespace

PTERON_KERNEL("aten::atanh.out", atanh_out, "TT");

}  // namespace pteron
