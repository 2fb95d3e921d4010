// aten::sign.out(Tensor self, *, Tensor(a!) out)
// out = -1, 0 or 1 by the sign of self (bool: self); NaN gives 0, as in torch.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error sign_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sign.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kAllTypes, kAllTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>)
      return x;
    else
      return static_cast<C>((C(0) < x) - (x < C(0)));
  });
}

}  // namespace

PTERON_KERNEL("aten::sign.out", sign_out, "TT");

}  // namespace pteron
