// aten::unique_dim.out(Tensor self, int dim, bool sorted=True, bool return_inverse=False,
//     bool return_counts=False, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     -> (Tensor(a!), Tensor(b!), Tensor(c!))
//
// torch.unique(dim=): the distinct slices along dim in lexicographic order, each slice's index
// among them and each one's count (torch writes the inverse and counts whatever the flags say).
// The slice count depends on the data: out0 and out2 are planned at self.size(dim) and resized.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/unique.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::unique_dim.out";

Error unique_dim_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  UniqueRequest request{kOp, 0, true, true, true};
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: self must have a dim, got a scalar",
               kOp);
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &request.dim));
  return unique_groups(ctx, self, request, *args[5]->tensor, *args[6]->tensor, *args[7]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::unique_dim.out", unique_dim_out, "TIBBBTTT");

}  // namespace pteron
