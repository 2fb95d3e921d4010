// aten::lgamma.out(Tensor self, *, Tensor(a!) out)
// out = log|gamma(x)| (+inf at the poles, as torch).
// Integer and bool inputs give a floating out (torch's type promotion). Not core ATen and not
// decomposed by run_decompositions(), so exported models keep it.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error lgamma_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::lgamma.out", *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return std::lgamma(x); });
}

}  // namespace

PTERON_KERNEL("aten::lgamma.out", lgamma_out, "TT");

}  // namespace pteron
