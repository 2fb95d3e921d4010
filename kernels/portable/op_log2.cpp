// aten::log2.out(Tensor self, *, Tensor(a!) out)
// out = base-2 logarithm; -inf at 0, NaN below.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error log2_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::log2.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::log2(x); });
}

}  // namespace

PTERON_KERNEL("aten::log2.out", log2_out, "TT");

}  // namespace pteron
