// aten::sin.out(Tensor self, *, Tensor(a!) out)
// out = sin(self); integer and bool inputs give a floating out.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error sin_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sin.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) { return std::sin(x); });
}

}  // namespace

PTERON_KERNEL("aten::sin.out", sin_out, "TT");

}  // namespace pteron
