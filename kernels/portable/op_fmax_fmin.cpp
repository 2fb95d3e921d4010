// aten::fmax.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::fmin.out(Tensor self, Tensor other, *, Tensor(a!) out)
// The larger / smaller of each pair with broadcasting; unlike maximum / minimum, a NaN loses to
// a number (std::fmax / std::fmin), NaN only where both are. Every real dtype and bool, as
// torch. Not decomposed by run_decompositions(), so exported models keep them.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <bool kMax>
Error fmax_or_fmin_out(const char* op, Span<EValue*> args) {
  return binary_elementwise(op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor, kAllTypes,
                            [](auto x, auto y) {
                              using C = decltype(x);
                              if constexpr (std::is_floating_point_v<C>)
                                return kMax ? std::fmax(x, y) : std::fmin(x, y);
                              else
                                return static_cast<C>((kMax ? x > y : x < y) ? x : y);
                            });
}

Error fmax_out(KernelContext&, Span<EValue*> args) {
  return fmax_or_fmin_out<true>("aten::fmax.out", args);
}

Error fmin_out(KernelContext&, Span<EValue*> args) {
  return fmax_or_fmin_out<false>("aten::fmin.out", args);
}

}  // namespace

PTERON_KERNEL("aten::fmax.out", fmax_out, "TTT");
PTERON_KERNEL("aten::fmin.out", fmin_out, "TTT");

}  // namespace pteron
