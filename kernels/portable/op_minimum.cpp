// aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
// NaN propagates, as in torch.
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error minimum_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::minimum.out";
  return binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor, kAllTypes,
                            [](auto x, auto y) {
                              // x != x: a NaN x wins; a NaN y fails x < y and wins.
                              return static_cast<decltype(x)>(x < y || x != x ? x : y);
                            });
}

}  // namespace

PTERON_KERNEL("aten::minimum.out", minimum_out, "TTT");

}  // namespace pteron
