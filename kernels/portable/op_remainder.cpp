// aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// Python modulo: the result takes the divisor's sign. Integer remainder by zero is an error.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error remainder_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::remainder.Tensor_out";
  PTERON_TRY(check_args(kOp, args, "TTT"));
  bool zero = false;
  PTERON_TRY(binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                kRealTypes,
                                [&zero](auto x, auto y) { return remainder_value(x, y, &zero); }));
  if (zero) return fail(Error::InvalidArgument, "%s: integer remainder by zero", kOp);
  return Error::Ok;
}

Error remainder_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::remainder.Scalar_out";
  PTERON_TRY(check_args(kOp, args, "TST"));
  const ScalarArg other(*args[1]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  const Tensor& self = *args[0]->tensor;
  if (!other.floating && other.i == 0 && !is_floating(self.dtype())) {
    return fail(Error::InvalidArgument, "%s: integer remainder by zero", kOp);
  }
  bool zero = false;  // cannot be set: zero divisors were rejected above
  return unary_elementwise<kAllTypes, kRealTypes>(
      kOp, self, out, [&](auto x) { return remainder_value(x, other.as<decltype(x)>(), &zero); });
}

}  // namespace

PTERON_KERNEL("aten::remainder.Tensor_out", remainder_tensor_out);
PTERON_KERNEL("aten::remainder.Scalar_out", remainder_scalar_out);

}  // namespace pteron
