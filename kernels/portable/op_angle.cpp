// aten::angle.out(Tensor self, *, Tensor(a!) out)
// The argument of a real number: pi for negatives, 0 otherwise, NaN kept (as ATen). Integer and
// bool inputs give a floating out. Not decomposed by run_decompositions().
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error angle_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::angle.out", *args[0]->tensor, *args[1]->tensor, [](auto x) {
    using S = decltype(x);
    if (std::isnan(x)) return x;
    return x < 0 ? S(3.14159265358979323846) : S(0);
  });
}

}  // namespace

PTERON_KERNEL("aten::angle.out", angle_out, "TT");

}  // namespace pteron
