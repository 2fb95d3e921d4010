// aten::abs.out(Tensor self, *, Tensor(a!) out)
// out = |self|. Not defined for bool, as in torch. A complex self gives its magnitude in the real
// part's dtype (std::hypot, as c10::complex's abs).
#include <cmath>

#include "kernels/portable/util/complex_elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error complex_magnitude(const char* op, const Tensor& in, Tensor& out) {
  PTERON_CHECK(
      (in.dtype() == ScalarType::ComplexFloat || in.dtype() == ScalarType::ComplexDouble) &&
          out.dtype() == complex_part_type(in.dtype()),
      Error::NotSupported, "%s: dtype %s -> %s not supported", op, scalar_type_name(in.dtype()),
      scalar_type_name(out.dtype()));
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  const auto run = [&](auto tag) {
    using P = decltype(tag);
    const ComplexValue<P>* x = in.data<const ComplexValue<P>>();
    P* y = out.data<P>();
    for_each_row(plan_unary_rows(in, out), [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t k = 0; k < n; ++k) {
        const ComplexValue<P> v = x[off[1] + k * st[1]];
        y[off[0] + k * st[0]] = std::hypot(v.re, v.im);
      }
    });
  };
  if (in.dtype() == ScalarType::ComplexFloat)
    run(float{});
  else
    run(double{});
  return Error::Ok;
}

Error abs_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::abs.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  if (is_complex(in.dtype())) return complex_magnitude(kOp, in, out);
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x);
    else if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return static_cast<C>(x < 0 ? -x : x);
  });
}

}  // namespace

PTERON_KERNEL("aten::abs.out", abs_out, "TT");

}  // namespace pteron
