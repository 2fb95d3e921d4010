// aten::ceil.out(Tensor self, *, Tensor(a!) out)
// Rounds up; integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error ceil_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::ceil.out";
  PTERON_TRY(check_args(kOp, args, "TT"));
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return std::ceil(x);
    else
      return x;
  });
}

}  // namespace

PTERON_KERNEL("aten::ceil.out", ceil_out);

}  // namespace pteron
