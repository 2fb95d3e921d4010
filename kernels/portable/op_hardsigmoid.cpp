// aten::hardsigmoid.out(Tensor self, *, Tensor(a!) out)
// out = min(max(self + 3, 0), 6) / 6. Floating dtypes only, as in torch.
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error hardsigmoid_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::hardsigmoid.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    const C r = x + C(3) < C(0) ? C(0) : x + C(3);
    return (r > C(6) ? C(6) : r) / C(6);
  });
}

}  // namespace

PTERON_KERNEL("aten::hardsigmoid.out", hardsigmoid_out, "TT");

}  // namespace pteron
