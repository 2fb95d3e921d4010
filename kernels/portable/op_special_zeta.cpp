// aten::special_zeta.out(Tensor self, Tensor other, *, Tensor(a!) out)
// out = the Hurwitz zeta function zeta(self, other) with broadcasting (util/special_math.h:
// Cephes' Euler-Maclaurin summation, as ATen), in double and rounded once. Floating out. Not
// decomposed by run_decompositions().
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/special_math.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error special_zeta_out(KernelContext&, Span<EValue*> args) {
  return binary_float_elementwise("aten::special_zeta.out", *args[0]->tensor, *args[1]->tensor,
                                  *args[2]->tensor, [](auto x, auto q) {
                                    return static_cast<decltype(x)>(special::zeta_value(
                                        static_cast<double>(x), static_cast<double>(q)));
                                  });
}

}  // namespace

PTERON_KERNEL("aten::special_zeta.out", special_zeta_out, "TTT");

}  // namespace pteron
