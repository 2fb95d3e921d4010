// aten::exp2.out(Tensor self, *, Tensor(a!) out)
// out = 2^x.
// Integer and bool inputs give a floating out (torch's type promotion). Not core ATen and not
// decomposed by run_decompositions(), so exported models keep it.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error exp2_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::exp2.out", *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::exp2(x); });
}

}  // namespace

PTERON_KERNEL("aten::exp2.out", exp2_out, "TT");

}  // namespace pteron
