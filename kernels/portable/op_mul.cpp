// aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// For bool, mul is logical and (as in torch). mul.out also takes complex tensors
// (util/complex_elementwise.h).
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/complex_elementwise.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error mul_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mul.out";
  if (is_complex(args[2]->tensor->dtype())) {
    return complex_binary(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                          [](auto x, auto y) { return complex_mul(x, y); });
  }
  return binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor, kAllTypes,
                            [](auto x, auto y) {
                              using C = decltype(x);
                              if constexpr (std::is_same_v<C, bool>)
                                return x && y;
                              else
                                return wrapping_mul<C>(x, y);
                            });
}

Error mul_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mul.Scalar_out";
  const ScalarArg other(*args[1]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  return unary_elementwise<kAllTypes, kAllTypes>(kOp, *args[0]->tensor, out, [other](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>)
      return x && other.as<bool>();
    else
      return wrapping_mul<C>(x, other.as<C>());
  });
}

}  // namespace

PTERON_KERNEL("aten::mul.out", mul_out, "TTT");
PTERON_KERNEL("aten::mul.Scalar_out", mul_scalar_out, "TST");

}  // namespace pteron
