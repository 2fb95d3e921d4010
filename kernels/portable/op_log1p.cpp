// aten::log1p.out(Tensor self, *, Tensor(a!) out)
// out = log(1 + x), accurate near 0 (why the op exists).
// Integer and bool inputs give a floating out (torch's type promotion).
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error log1p_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::log1p.out";
  return unary_float_op(kOp, *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::log1p(x); });
}

}  // namespace

PTERON_KERNEL("aten::log1p.out", log1p_out, "TT");

}  // namespace pteron
