// aten::leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out)
// out = self > 0 ? self : self * negative_slope. Floating dtypes only, as in torch.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error leaky_relu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::leaky_relu.out";
  const ScalarArg slope(*args[1]);
  return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, *args[0]->tensor, *args[2]->tensor,
                                                     [slope](auto x) {
                                                       using C = decltype(x);
                                                       return x > C(0) ? x : x * slope.as<C>();
                                                     });
}

}  // namespace

PTERON_KERNEL("aten::leaky_relu.out", leaky_relu_out, "TST");

}  // namespace pteron
