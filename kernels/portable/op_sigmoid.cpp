// aten::sigmoid.out(Tensor self, *, Tensor(a!) out)
// out = 1 / (1 + e^-self); integer and bool inputs give a floating out.
#include "kernels/portable/util/fast_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error sigmoid_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sigmoid.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return C(1) / (C(1) + fast_exp(-x));
  });
}

}  // namespace

PTERON_KERNEL("aten::sigmoid.out", sigmoid_out, "TT");

}  // namespace pteron
