// aten::logical_xor.out(Tensor self, Tensor other, *, Tensor(a!) out)
// Inputs of any dtype are truth values (x != 0); out is bool (or 0/1 in another dtype).
#include "kernels/portable/util/predicate.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error logical_xor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::logical_xor.out";
  return binary_predicate<kAllTypes>(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                     [](auto x, auto y) {
                                       using C = decltype(x);
                                       return (x != C(0)) != (y != C(0));
                                     });
}

}  // namespace

PTERON_KERNEL("aten::logical_xor.out", logical_xor_out, "TTT");

}  // namespace pteron
