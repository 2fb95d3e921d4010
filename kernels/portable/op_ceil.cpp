// aten::ceil.out(Tensor self, *, Tensor(a!) out)
// Rounds up; integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/round.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error ceil_out(KernelContext&, Span<EValue*> args) {
  return round_to_integral_out("aten::ceil.out", args, [](auto x) { return std::ceil(x); });
}

}  // namespace

PTERON_KERNEL("aten::ceil.out", ceil_out, "TT");

}  // namespace pteron
