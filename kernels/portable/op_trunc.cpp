// aten::trunc.out(Tensor self, *, Tensor(a!) out)
// Rounds toward zero; integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/round.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error trunc_out(KernelContext&, Span<EValue*> args) {
  return round_to_integral_out("aten::trunc.out", args, [](auto x) { return std::trunc(x); });
}

}  // namespace

PTERON_KERNEL("aten::trunc.out", trunc_out, "TT");

}  // namespace pteron
