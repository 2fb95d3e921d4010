// aten::abs.out(Tensor self, *, Tensor(a!) out)
// out = |self|. Not defined for bool, as in torch.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error abs_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::abs.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x);
    else if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return static_cast<C>(x < 0 ? -x : x);
  });
}

}  // namespace

PTERON_KERNEL("aten::abs.out", abs_out, "TT");

}  // namespace pteron
