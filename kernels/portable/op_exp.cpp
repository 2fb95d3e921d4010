// aten::exp.out(Tensor self, *, Tensor(a!) out)
// out = e^self; integer and bool inputs give a floating out.
#include "kernels/portable/util/fast_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error exp_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::exp.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) { return fast_exp(x); });
}

}  // namespace

PTERON_KERNEL("aten::exp.out", exp_out, "TT");

}  // namespace pteron
