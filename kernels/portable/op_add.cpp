// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
// aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
// add.out also takes complex tensors (util/complex_elementwise.h).
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/complex_elementwise.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error add_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::add.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  if (is_complex(out.dtype())) {
    const double alpha = args[2]->scalar_as_double();
    return complex_binary(kOp, a, b, out,
                          [alpha](auto x, auto y) { return complex_add_scaled(x, alpha, 0.0, y); });
  }
  if (is_floating(out.dtype())) {
    const double alpha = args[2]->scalar_as_double();
    return binary_elementwise(kOp, a, b, out, kRealTypes, [alpha](auto x, auto y) {
      return x + static_cast<decltype(y)>(alpha) * y;
    });
  }
  const int64_t alpha = args[2]->scalar_as_int();
  return binary_elementwise(kOp, a, b, out, kAllTypes, [alpha](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>)
      return static_cast<bool>(x || (alpha != 0 && y));
    else
      return wrapping_add<C>(x, wrapping_mul<C>(static_cast<C>(alpha), y));
  });
}

Error add_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::add.Scalar_out";
  const ScalarArg other(*args[1]), alpha(*args[2]);
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  PTERON_TRY(check_scalar_fits_out(kOp, alpha, out));
  return unary_elementwise<kAllTypes, kAllTypes>(kOp, *args[0]->tensor, out, [=](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>)
      return x || (alpha.as<bool>() && other.as<bool>());
    else
      return wrapping_add<C>(x, wrapping_mul<C>(alpha.as<C>(), other.as<C>()));
  });
}

}  // namespace

PTERON_KERNEL("aten::add.out", add_out, "TTST");
PTERON_KERNEL("aten::add.Scalar_out", add_scalar_out, "TSST");

}  // namespace pteron
