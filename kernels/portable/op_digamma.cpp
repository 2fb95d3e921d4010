// aten::digamma.out(Tensor self, *, Tensor(a!) out)
// out = d/dx log(gamma(x)) with ATen's algorithm (Cephes psi): the reflection formula below 0
// (NaN at the negative integers, -inf / +inf at +0 / -0), the recurrence up to 10, then the
// asymptotic series; in the compute type (float for float32, as ATen). Integer and bool inputs
// give a floating out. Not decomposed by run_decompositions(): probabilistic models (Gamma,
// Beta, Dirichlet log-probabilities) keep it.
#include <cmath>

#include "kernels/portable/util/special_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error digamma_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::digamma.out", *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return special::digamma_value(x); });
}

}  // namespace

PTERON_KERNEL("aten::digamma.out", digamma_out, "TT");

}  // namespace pteron
