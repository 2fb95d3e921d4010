// aten::gcd.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::lcm.out(Tensor self, Tensor other, *, Tensor(a!) out)
// Greatest common divisor and least common multiple of integer tensors with broadcasting, as
// ATen's calc_gcd: Euclid on the absolute values (gcd(0, 0) = 0, lcm with a 0 is 0), wrapping
// where ATen's does. Integer dtypes only, as torch.
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename T>
T magnitude(T v) {
  if constexpr (std::is_signed_v<T>)
    return v < 0 ? wrapping_mul(v, T(-1)) : v;
  else
    return v;
}

template <typename T>
T gcd_value(T a, T b) {
  a = magnitude(a);
  b = magnitude(b);
  while (a != 0) {
    const T c = a;
    a = static_cast<T>(b % a);
    b = c;
  }
  return b;
}

// |a / g * b| in C++'s promoted type (int for the narrow types), as ATen's ::abs(a / g * b), then
// truncated to T: an int8 lcm past 127 wraps as torch's does.
template <typename T>
T lcm_value(T a, T b) {
  using W = decltype(+a);
  const T g = gcd_value(a, b);
  if (g == 0) return T(0);
  return static_cast<T>(magnitude(wrapping_mul(static_cast<W>(a / g), static_cast<W>(b))));
}

// Mixed dtypes reach f as doubles holding integers (exact below 2^53): computed in int64.
template <bool kLcm>
Error gcd_or_lcm_out(const char* op, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  PTERON_CHECK(is_integral(a.dtype(), false) && is_integral(b.dtype(), false), Error::NotSupported,
               "%s: integer tensors only, got %s and %s", op, scalar_type_name(a.dtype()),
               scalar_type_name(b.dtype()));
  return binary_elementwise(op, a, b, *args[2]->tensor, kIntTypes, [](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      const auto xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
      return static_cast<C>(kLcm ? lcm_value(xi, yi) : gcd_value(xi, yi));
    } else if constexpr (std::is_same_v<C, bool>) {
      return x;  // instantiated by the dispatch, never called: integer dtypes only
    } else {
      return kLcm ? lcm_value(x, y) : gcd_value(x, y);
    }
  });
}

Error gcd_out(KernelContext&, Span<EValue*> args) {
  return gcd_or_lcm_out<false>("aten::gcd.out", args);
}

Error lcm_out(KernelContext&, Span<EValue*> args) {
  return gcd_or_lcm_out<true>("aten::lcm.out", args);
}

}  // namespace

PTERON_KERNEL("aten::gcd.out", gcd_out, "TTT");
PTERON_KERNEL("aten::lcm.out", lcm_out, "TTT");

}  // namespace pteron
