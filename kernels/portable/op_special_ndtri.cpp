// aten::special_ndtri.out(Tensor self, *, Tensor(a!) out)
// out = the inverse of the standard normal CDF (util/special_math.h: Newton steps on erfc in
// double, rounded once): NaN outside [0, 1], -inf / inf at 0 / 1. Integer and bool inputs give a
// floating out. Not decomposed by run_decompositions() (probit links, Gaussian copulas).
#include "kernels/portable/util/special_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error special_ndtri_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op_in_double("aten::special_ndtri.out", *args[0]->tensor, *args[1]->tensor,
                                  special::ndtri_value);
}

}  // namespace

PTERON_KERNEL("aten::special_ndtri.out", special_ndtri_out, "TT");

}  // namespace pteron
