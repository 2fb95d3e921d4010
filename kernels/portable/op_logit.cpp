// aten::logit.out(Tensor self, float? eps=None, *, Tensor(a!) out)
// out = log(z / (1 - z)) with z = self clamped to [eps, 1 - eps] when eps is given (else NaN
// outside [0, 1] and +-inf at the ends, as torch). Integer and bool inputs give a floating out.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error logit_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::logit.out";
  const bool clamp = !args[1]->is_none();
  const double eps = clamp ? args[1]->d : 0.0;
  return unary_float_op(kOp, *args[0]->tensor, *args[2]->tensor, [clamp, eps](auto x) {
    using C = decltype(x);
    C z = x;
    if (clamp) {
      const C lo = static_cast<C>(eps), hi = static_cast<C>(1.0 - eps);
      z = z < lo ? lo : z > hi ? hi : z;  // NaN stays NaN
    }
    return static_cast<C>(std::log(z / (C(1) - z)));
  });
}

}  // namespace

PTERON_KERNEL("aten::logit.out", logit_out, "TdT");

}  // namespace pteron
