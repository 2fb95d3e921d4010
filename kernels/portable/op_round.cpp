// aten::round.out(Tensor self, *, Tensor(a!) out)
// Rounds half to even (like torch); integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/round.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error round_out(KernelContext&, Span<EValue*> args) {
  return round_to_integral_out("aten::round.out", args, [](auto x) { return std::nearbyint(x); });
}

}  // namespace

PTERON_KERNEL("aten::round.out", round_out, "TT");

}  // namespace pteron
