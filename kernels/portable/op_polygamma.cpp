// aten::polygamma.out(int n, Tensor self, *, Tensor(a!) out)
// out = the n-th derivative of digamma, as ATen (util/special_math.h): digamma, trigamma, then
// (-1)^(n+1) n! zeta(n + 1, x); digamma and trigamma in the compute type (float for float32, as
// ATen), the others in double and rounded once (zeta's terms cancel at negative x, where a float
// sum is off by 10%). n < 0 is refused. Integer and bool inputs give a floating out. Not
// decomposed by run_decompositions().
#include "kernels/portable/util/special_math.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error polygamma_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::polygamma.out";
  const int64_t n = args[0]->i;
  PTERON_CHECK(n >= 0, Error::InvalidArgument, "%s: n must be non-negative, got %lld", kOp,
               static_cast<long long>(n));
  return unary_float_op(kOp, *args[1]->tensor, *args[2]->tensor, [n](auto x) {
    using C = decltype(x);
    if (n == 0) return special::digamma_value(x);
    if (n == 1) return special::trigamma_value(x);
    return static_cast<C>(special::polygamma_value(n, static_cast<double>(x)));
  });
}

}  // namespace

PTERON_KERNEL("aten::polygamma.out", polygamma_out, "ITT");

}  // namespace pteron
