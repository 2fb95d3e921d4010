// aten::cos.out(Tensor self, *, Tensor(a!) out)
// out = cos(self); integer and bool inputs give a floating out.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error cos_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::cos.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_float_op(kOp, in, out, [](auto x) { return std::cos(x); });
}

}  // namespace

PTERON_KERNEL("aten::cos.out", cos_out, "TT");

}  // namespace pteron
