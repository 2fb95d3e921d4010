// aten::relu.out(Tensor self, *, Tensor(a!) out)
// out = max(self, 0); NaN stays NaN. Not defined for bool, as in torch.
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error relu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::relu.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return x < C(0) ? C(0) : x;
  });
}

}  // namespace

PTERON_KERNEL("aten::relu.out", relu_out, "TT");

}  // namespace pteron
