// aten::gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out)
// "none": x/2 * (1 + erf(x / sqrt 2)); "tanh": x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Floating dtypes only, as in torch.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/fast_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error gelu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::gelu.out";
  PTERON_TRY(check_string_arg(kOp, *args[1], 1, /*optional=*/false));
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  if (string_equals(*args[1], "none")) {
    return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, in, out, [](auto x) {
      using C = decltype(x);
      return x * C(0.5) * (C(1) + fast_erf(x * C(0.70710678118654752440)));
    });
  }
  if (string_equals(*args[1], "tanh")) {
    return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, in, out, [](auto x) {
      using C = decltype(x);
      constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi)
      const C inner = C(kBeta) * (x + C(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + fast_tanh(inner));
    });
  }
  return fail(Error::InvalidArgument, "%s: approximate must be 'none' or 'tanh'", kOp);
}

}  // namespace

PTERON_KERNEL("aten::gelu.out", gelu_out, "T*T");

}  // namespace pteron
