// aten::reciprocal.out(Tensor self, *, Tensor(a!) out)
// out = 1 / self; integer and bool inputs give a floating out.
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error reciprocal_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::reciprocal.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) {
    using C = decltype(x);
    return C(1) / x;
  });
}

}  // namespace

PTERON_KERNEL("aten::reciprocal.out", reciprocal_out, "TT");

}  // namespace pteron
