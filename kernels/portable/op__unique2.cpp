// aten::_unique2.out(Tensor self, bool sorted=True, bool return_inverse=False,
//     bool return_counts=False, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     -> (Tensor(a!), Tensor(b!), Tensor(c!))
//
// torch.unique without dim: the distinct elements in ascending order (sorted=False sorts too, as
// torch's CPU kernel does), each element's index among them, each one's count. The number of
// distinct elements depends on the data: out0 and out2 are planned at self's numel and resized.
#include "kernels/portable/util/unique.h"

namespace pteron {
namespace {

Error unique2_out(KernelContext& ctx, Span<EValue*> args) {
  const UniqueRequest request{"aten::_unique2.out", -1, true, args[2]->b, args[3]->b};
  return unique_groups(ctx, *args[0]->tensor, request, *args[4]->tensor, *args[5]->tensor,
                       *args[6]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::_unique2.out", unique2_out, "TBBBTTT");

}  // namespace pteron
