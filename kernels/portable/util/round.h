// ceil, floor, round and trunc share one kernel body: floating values go through a <cmath>
// rounding function, integers are already integral and are copied unchanged (as torch does).
#pragma once

#include <type_traits>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// args: self, out. `round_float(x)` rounds one floating value.
template <typename RoundFloat>
Error round_to_integral_out(const char* op, Span<EValue*> args, RoundFloat round_float) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  return unary_elementwise<kRealTypes, kRealTypes>(op, in, out, [&](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(round_float(x));
    else
      return x;
  });
}

}  // namespace pteron
