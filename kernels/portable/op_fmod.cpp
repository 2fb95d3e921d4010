// aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// C fmod: the result takes the dividend's sign. Integer fmod by zero is an error.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error fmod_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::fmod.Tensor_out";
  PTERON_TRY(check_args(kOp, args, "TTT"));
  bool zero = false;
  PTERON_TRY(binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                kRealTypes,
                                [&zero](auto x, auto y) { return fmod_value(x, y, &zero); }));
  if (zero) return fail(Error::InvalidArgument, "%s: integer fmod by zero", kOp);
  return Error::Ok;
}

Error fmod_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::fmod.Scalar_out";
  PTERON_TRY(check_args(kOp, args, "TST"));
  const ScalarArg other(*args[1]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  const Tensor& self = *args[0]->tensor;
  if (!other.floating && other.i == 0 && !is_floating(self.dtype())) {
    return fail(Error::InvalidArgument, "%s: integer fmod by zero", kOp);
  }
  bool zero = false;  // cannot be set: zero divisors were rejected above
  return unary_elementwise<kAllTypes, kRealTypes>(
      kOp, self, out, [&](auto x) { return fmod_value(x, other.as<decltype(x)>(), &zero); });
}

}  // namespace

PTERON_KERNEL("aten::fmod.Tensor_out", fmod_tensor_out);
PTERON_KERNEL("aten::fmod.Scalar_out", fmod_scalar_out);

}  // namespace pteron
