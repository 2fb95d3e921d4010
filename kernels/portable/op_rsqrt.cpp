// aten::rsqrt.out(Tensor self, *, Tensor(a!) out)
// out = 1 / sqrt(self); integer and bool inputs give a floating out.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error rsqrt_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::rsqrt.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return C(1) / std::sqrt(x);
  });
}

}  // namespace

PTERON_KERNEL("aten::rsqrt.out", rsqrt_out, "TT");

}  // namespace pteron
