// aten::tanh.out(Tensor self, *, Tensor(a!) out)
// out = tanh(self); integer and bool inputs give a floating out.
#include "kernels/portable/util/fast_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error tanh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::tanh.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) { return fast_tanh(x); });
}

}  // namespace

PTERON_KERNEL("aten::tanh.out", tanh_out, "TT");

}  // namespace pteron
