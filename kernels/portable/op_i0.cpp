// aten::i0.out(Tensor self, *, Tensor(a!) out)
// out = I0(x), the modified Bessel function of the first kind, order 0 (Kaiser windows, audio
// resampling): libstdc++'s std::cyl_bessel_i on |x| (I0 is even) in double, rounded to the
// out dtype. Integer and bool inputs give a floating out. Not decomposed by
// run_decompositions(), so exported models keep it.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error i0_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::i0.out", *args[0]->tensor, *args[1]->tensor, [](auto x) {
    using S = decltype(x);
    if (std::isnan(x)) return x;
    if (std::isinf(x)) return std::numeric_limits<S>::infinity();
    return static_cast<S>(std::cyl_bessel_i(0.0, std::fabs(static_cast<double>(x))));
  });
}

}  // namespace

PTERON_KERNEL("aten::i0.out", i0_out, "TT");

}  // namespace pteron
