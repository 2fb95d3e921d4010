// aten::round.out(Tensor self, *, Tensor(a!) out)
// aten::round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out)
// Rounds half to even (like torch); integers are copied unchanged. With decimals, as ATen:
// nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for negative d, in the compute type
// (floating dtypes only, as torch).
#include <cmath>

#include "kernels/portable/util/round.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error round_out(KernelContext&, Span<EValue*> args) {
  return round_to_integral_out("aten::round.out", args, [](auto x) { return std::nearbyint(x); });
}

Error round_decimals_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::round.decimals_out";
  const int64_t decimals = args[1]->i;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(decimals >= -308 && decimals <= 308, Error::InvalidArgument,
               "%s: decimals %lld out of range", kOp, static_cast<long long>(decimals));
  const bool negative = decimals < 0;
  const double ten_pow = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
  return unary_float_op(kOp, *args[0]->tensor, out, [&](auto x) {
    using C = decltype(x);
    const C p = static_cast<C>(ten_pow);
    return negative ? static_cast<C>(std::nearbyint(x / p) * p)
                    : static_cast<C>(std::nearbyint(x * p) / p);
  });
}

}  // namespace

PTERON_KERNEL("aten::round.out", round_out, "TT");
PTERON_KERNEL("aten::round.decimals_out", round_decimals_out, "TIT");

}  // namespace pteron
