// aten::elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *,
//               Tensor(a!) out)
// out = self > 0 ? self * scale : expm1(self * input_scale) * alpha * scale (torch's form).
// Floating dtypes only, as in torch.
#include <cmath>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error elu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::elu.out";
  const double neg_coef = args[1]->scalar_as_double() * args[2]->scalar_as_double();
  const double pos_coef = args[2]->scalar_as_double();
  const double input_coef = args[3]->scalar_as_double();
  return unary_elementwise<kFloatTypes, kFloatTypes>(
      kOp, *args[0]->tensor, *args[4]->tensor, [=](auto x) {
        using C = decltype(x);
        return x <= C(0) ? std::expm1(x * C(input_coef)) * C(neg_coef) : x * C(pos_coef);
      });
}

}  // namespace

PTERON_KERNEL("aten::elu.out", elu_out, "TSSST");

}  // namespace pteron
