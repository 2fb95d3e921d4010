// aten::neg.out(Tensor self, *, Tensor(a!) out)
// out = -self. Not defined for bool, as in torch.
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error neg_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::neg.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return static_cast<C>(-x);
  });
}

}  // namespace

PTERON_KERNEL("aten::neg.out", neg_out, "TT");

}  // namespace pteron
