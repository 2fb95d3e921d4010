// aten::bitwise_not.out(Tensor self, *, Tensor(a!) out)
// out = ~self for integers, !self for bool. Floating dtypes are rejected, as in torch.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error bitwise_not_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::bitwise_not.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kIntTypes | kBoolType, kIntTypes | kBoolType>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else if constexpr (std::is_floating_point_v<C>)
      return C(~static_cast<int64_t>(x));  // mixed
    else
      return static_cast<C>(~x);
  });
}

}  // namespace

PTERON_KERNEL("aten::bitwise_not.out", bitwise_not_out, "TT");

}  // namespace pteron
