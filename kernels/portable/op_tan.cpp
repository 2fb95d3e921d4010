// aten::tan.out(Tensor self, *, Tensor(a!) out)
// out = tangent.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error tan_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::tan.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::tan(x); });
}

}  // namespace

PTERON_KERNEL("aten::tan.out", tan_out, "TT");

}  // namespace pteron
