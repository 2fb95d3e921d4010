// aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out)
// aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)
// aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out)
//
// Integer powers are exact (repeated squaring, wrapping like torch); a negative integer
// exponent gives torch's values (1 for base 1, +-1 for base -1, else 0), and a negative
// Scalar exponent for integer tensors is an error as in torch.
#include <cmath>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename C>
C int_pow(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (-exp) % 2 ? -1 : 1;
      return 0;
    }
  }
  // Unsigned arithmetic so overflow wraps instead of being undefined.
  using U = std::make_unsigned_t<decltype(+base)>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = exp; e != 0; e /= 2) {
    if (e % 2) result *= b;
    b *= b;
  }
  return static_cast<C>(result);
}

template <typename C>
C power(C base, C exp) {
  if constexpr (std::is_same_v<C, bool>)
    return base || !exp;
  else if constexpr (std::is_floating_point_v<C>)
    return std::pow(base, exp);
  else
    return int_pow(base, exp);
}

Error pow_tensor_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::pow.Tensor_Tensor_out";
  return binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor, kRealTypes,
                            [](auto x, auto y) { return power(x, y); });
}

Error pow_tensor_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::pow.Tensor_Scalar_out";
  const Tensor& self = *args[0]->tensor;
  const ScalarArg exp(*args[1]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, exp, out));
  if (!exp.floating && exp.i < 0 && !is_floating(self.dtype())) {
    return fail(Error::InvalidArgument, "%s: integers to negative integer powers are not allowed",
                kOp);
  }
  return unary_elementwise<kAllTypes, kRealTypes>(kOp, self, out, [exp](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      // The common exponents exactly as torch special-cases them.
      const C e = exp.as<C>();
      if (e == C(2)) return x * x;
      if (e == C(1)) return x;
      if (e == C(0.5)) return std::sqrt(x);
      return std::pow(x, e);
    } else {
      return power(x, exp.as<C>());
    }
  });
}

Error pow_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::pow.Scalar_out";
  const ScalarArg base(*args[0]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, base, out));
  return unary_elementwise<kAllTypes, kRealTypes>(
      kOp, *args[1]->tensor, out, [base](auto x) { return power(base.as<decltype(x)>(), x); });
}

}  // namespace

PTERON_KERNEL("aten::pow.Tensor_Tensor_out", pow_tensor_tensor_out, "TTT");
PTERON_KERNEL("aten::pow.Tensor_Scalar_out", pow_tensor_scalar_out, "TST");
PTERON_KERNEL("aten::pow.Scalar_out", pow_scalar_out, "STT");

}  // namespace pteron
