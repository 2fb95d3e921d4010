// aten::silu.out(Tensor self, *, Tensor(a!) out)
// out = self * sigmoid(self). Floating dtypes only, as in torch.
#include "kernels/portable/util/fast_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error silu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::silu.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return x / (C(1) + fast_exp(-x));
  });
}

}  // namespace

PTERON_KERNEL("aten::silu.out", silu_out, "TT");

}  // namespace pteron
