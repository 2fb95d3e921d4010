// aten::floor.out(Tensor self, *, Tensor(a!) out)
// Rounds down; integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error floor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::floor.out";
  PTERON_TRY(check_args(kOp, args, "TT"));
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return std::floor(x);
    else
      return x;
  });
}

}  // namespace

PTERON_KERNEL("aten::floor.out", floor_out);

}  // namespace pteron
