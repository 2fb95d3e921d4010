// aten::isinf.out(Tensor self, *, Tensor(a!) out)
// out = self is +-infinity (false for integers), as bool.
#include <cmath>

#include "kernels/portable/util/predicate.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error isinf_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::isinf.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_predicate<kAllTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return std::isinf(x);
    else
      return false;
  });
}

}  // namespace

PTERON_KERNEL("aten::isinf.out", isinf_out, "TT");

}  // namespace pteron
