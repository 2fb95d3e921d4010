// aten::log10.out(Tensor self, *, Tensor(a!) out)
// out = base-10 logarithm.
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error log10_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::log10.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::log10(x); });
}

}  // namespace

PTERON_KERNEL("aten::log10.out", log10_out, "TT");

}  // namespace pteron
