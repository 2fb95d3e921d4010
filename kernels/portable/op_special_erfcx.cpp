// aten::special_erfcx.out(Tensor self, *, Tensor(a!) out)
// out = exp(x^2) erfc(x) (util/special_math.h), in double and rounded once; what
// torch.special.log_ndtr decomposes into. Integer and bool inputs give a floating out. Not
// decomposed by run_decompositions().
#include "kernels/portable/util/special_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error special_erfcx_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op_in_double("aten::special_erfcx.out", *args[0]->tensor, *args[1]->tensor,
                                  special::erfcx_value);
}

}  // namespace

PTERON_KERNEL("aten::special_erfcx.out", special_erfcx_out, "TT");

}  // namespace pteron
