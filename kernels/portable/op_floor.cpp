// aten::floor.out(Tensor self, *, Tensor(a!) out)
// Rounds down; integers are copied unchanged.
#include <cmath>

#include "kernels/portable/util/round.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error floor_out(KernelContext&, Span<EValue*> args) {
  return round_to_integral_out("aten::floor.out", args, [](auto x) { return std::floor(x); });
}

}  // namespace

PTERON_KERNEL("aten::floor.out", floor_out, "TT");

}  // namespace pteron
