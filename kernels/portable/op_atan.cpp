// aten::atan.out(Tensor self, *, Tensor(a!) out)
// out = arc tangent.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error atan_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::atan.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::atan(x); });
}

}  // namespace

PTERON_KERNEL("aten::atan.out", atan_out, "TT");

}  // namespace pteron
