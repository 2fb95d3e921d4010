// aten::fmin.out(Tensor self, Tensor other, *, Tensor(a!) out)
// The smaller of each pair with broadcasting; unlike minimum, a NaN loses to a number (std::fmin),
// NaN only where both are. Every real dtype and bool, as torch. Not decomposed by
// run_decompositions(), so exported models keep it.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error fmin_out(KernelContext&, Span<EValue*> args) {
  return binary_elementwise("aten::fmin.out", *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                            kAllTypes, [](auto x, auto y) {
                              using C = decltype(x);
                              if constexpr (std::is_floating_point_v<C>)
                                return std::fmin(x, y);
                              else
                                return static_cast<C>(x < y ? x : y);
                            });
}

}  // namespace

PTERON_KERNEL("aten::fmin.out", fmin_out, "TTT");

}  // namespace pteron
