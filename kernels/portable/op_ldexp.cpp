// aten::ldexp.out(Tensor self, Tensor other, *, Tensor(a!) out)
// out = self * 2^other with broadcasting (ATen: self * pow(2, other)); integer and bool inputs
// give a floating out. Not decomposed by run_decompositions(), so exported models keep it.
#include <cmath>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error ldexp_out(KernelContext&, Span<EValue*> args) {
  return binary_float_elementwise("aten::ldexp.out", *args[0]->tensor, *args[1]->tensor,
                                  *args[2]->tensor, [](auto x, auto y) {
                                    using C = decltype(x);
                                    return x * std::pow(C(2), y);
                                  });
}

}  // namespace

PTERON_KERNEL("aten::ldexp.out", ldexp_out, "TTT");

}  // namespace pteron
