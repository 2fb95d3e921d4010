// aten::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
// aten::sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
// Like torch, subtraction is not defined for bool. sub.out also takes complex tensors
// (util/complex_elementwise.h).
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/complex_elementwise.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error reject_bool(const char* op, const Tensor& t) {
  if (t.dtype() == ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: subtraction is not supported for bool tensors", op);
  }
  return Error::Ok;
}

Error sub_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sub.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  if (is_complex(out.dtype())) {
    const double alpha = args[2]->scalar_as_double();
    // ATen subtracts by adding -alpha, a complex (-alpha, -0.0).
    return complex_binary(
        kOp, a, b, out, [alpha](auto x, auto y) { return complex_add_scaled(x, -alpha, -0.0, y); });
  }
  PTERON_TRY(reject_bool(kOp, a));
  PTERON_TRY(reject_bool(kOp, b));
  const ScalarArg alpha(*args[2]);
  PTERON_TRY(check_scalar_fits_out(kOp, alpha, out));
  return binary_elementwise(kOp, a, b, out, kRealTypes, [alpha](auto x, auto y) {
    using C = decltype(x);
    return wrapping_sub_scaled<C>(x, alpha.as<C>(), y);
  });
}

Error sub_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sub.Scalar_out";
  const Tensor& a = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(reject_bool(kOp, a));
  const ScalarArg other(*args[1]), alpha(*args[2]);
  PTERON_TRY(check_scalar_fits_out(kOp, other, out));
  PTERON_TRY(check_scalar_fits_out(kOp, alpha, out));
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, a, out, [=](auto x) {
    using C = decltype(x);
    return wrapping_sub_scaled<C>(x, alpha.as<C>(), other.as<C>());
  });
}

}  // namespace

PTERON_KERNEL("aten::sub.out", sub_out, "TTST");
PTERON_KERNEL("aten::sub.Scalar_out", sub_scalar_out, "TSST");

}  // namespace pteron
