// aten::digamma.out(Tensor self, *, Tensor(a!) out)
// out = d/dx log(gamma(x)) with ATen's algorithm (Cephes psi): the reflection formula below 0
// (NaN at the negative integers, -inf / +inf at +0 / -0), the recurrence up to 10, then the
// asymptotic series; in the compute type (float for float32, as ATen). Integer and bool inputs
// give a floating out. Not decomposed by run_decompositions(): probabilistic models (Gamma,
// Beta, Dirichlet log-probabilities) keep it.
#include <cmath>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename S>
S digamma_value(S x) {
  constexpr S kPi = S(3.14159265358979323846);
  if (x == 0) return std::copysign(std::numeric_limits<S>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<S>::quiet_NaN();
    S whole;
    const S frac = std::modf(x, &whole);
    return digamma_value<S>(S(1) - x) - kPi / std::tan(kPi * frac);
  }
  S result = 0;
  while (x < S(10)) {
    result -= S(1) / x;
    x += S(1);
  }
  if (x == S(10)) return result + S(2.25175258906672110764);  // psi(10)
  // Asymptotic series in 1/x^2, highest coefficient first.
  constexpr S kA[] = {S(8.33333333333333333333E-2), S(-2.10927960927960927961E-2),
                      S(7.57575757575757575758E-3), S(-4.16666666666666666667E-3),
                      S(3.96825396825396825397E-3), S(-8.33333333333333333333E-3),
                      S(8.33333333333333333333E-2)};
  S y = 0;
  if (x < S(1.0e17)) {
    const S z = S(1) / (x * x);
    S poly = kA[0];
    for (int i = 1; i < 7; ++i) poly = poly * z + kA[i];
    y = z * poly;
  }
  return result + std::log(x) - (S(0.5) / x) - y;
}

Error digamma_out(KernelContext&, Span<EValue*> args) {
  return unary_float_op("aten::digamma.out", *args[0]->tensor, *args[1]->tensor,
                        [](auto x) { return digamma_value(x); });
}

}  // namespace

PTERON_KERNEL("aten::digamma.out", digamma_out, "TT");

}  // namespace pteron
