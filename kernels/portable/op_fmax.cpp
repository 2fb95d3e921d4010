// aten::fmax.out(Tensor self, Tensor other, *, Tensor(a!) out)
// The larger of each pair with broadcasting; unlike maximum, a NaN loses to a number (std::fmax),
// NaN only where both are. Every real dtype and bool, as torch. Not decomposed by
// run_decompositions(), so exported models keep it.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error fmax_out(KernelContext&, Span<EValue*> args) {
  return binary_elementwise("aten::fmax.out", *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                            kAllTypes, [](auto x, auto y) {
                              using C = decltype(x);
                              if constexpr (std::is_floating_point_v<C>)
                                return std::fmax(x, y);
                              else
                                return static_cast<C>(x > y ? x : y);
                            });
}

}  // namespace

PTERON_KERNEL("aten::fmax.out", fmax_out, "TTT");

}  // namespace pteron
