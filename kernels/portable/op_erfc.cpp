// aten::erfc.out(Tensor self, *, Tensor(a!) out)
// out = 1 - erf(x), accurate where erf(x) is near 1.
// Integer and bool inputs give a floating out (torch's type promotion). Not core ATen and not
// decomposed by run_decompositions(), so exported models keep it.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error erfc_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::erfc.out", *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::erfc(x); });
}

}  // namespace

PTERON_KERNEL("aten::erfc.out", erfc_out, "TT");

}  // namespace pteron
