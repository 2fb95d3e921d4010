// aten::atan2.out(Tensor self, Tensor other, *, Tensor(a!) out)
// out = atan2(self, other) with broadcasting; integer and bool inputs give a floating out.
#include <cmath>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error atan2_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::atan2.out";
  return binary_float_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                  [](auto y, auto x) { return std::atan2(y, x); });
}

}  // namespace

PTERON_KERNEL("aten::atan2.out", atan2_out, "TTT");

}  // namespace pteron
