// aten::logical_not.out(Tensor self, *, Tensor(a!) out)
// out = (self == 0), as bool (or 0/1 in another out dtype).
#include "kernels/portable/util/predicate.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error logical_not_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::logical_not.out";
  return unary_predicate<kAllTypes>(kOp, *args[0]->tensor, *args[1]->tensor,
                                    [](auto x) { return x == decltype(x)(0); });
}

}  // namespace

PTERON_KERNEL("aten::logical_not.out", logical_not_out, "TT");

}  // namespace pteron
