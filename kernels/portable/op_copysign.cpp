// aten::copysign.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = |self| with the sign of other (the sign bit: -0.0 counts as negative), broadcasting;
// integer and bool inputs give a floating out, as in torch.
#include <cmath>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error copysign_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::copysign.out";
  return binary_float_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                  [](auto x, auto y) { return std::copysign(x, y); });
}

Error copysign_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::copysign.Scalar_out";
  const double sign = ScalarArg(*args[1]).d;
  return unary_float_op(kOp, *args[0]->tensor, *args[2]->tensor, [sign](auto x) {
    return static_cast<decltype(x)>(std::copysign(x, static_cast<decltype(x)>(sign)));
  });
}

}  // namespace

PTERON_KERNEL("aten::copysign.out", copysign_out, "TTT");
PTERON_KERNEL("aten::copysign.Scalar_out", copysign_scalar_out, "TST");

}  // namespace pteron
