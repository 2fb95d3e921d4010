// aten::unique_consecutive.out(Tensor self, bool return_inverse=False, bool return_counts=False,
//     int? dim=None, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     -> (Tensor(a!), Tensor(b!), Tensor(c!))
//
// Runs of equal neighbours collapsed to one: of the flattened elements, or of the slices along
// dim (then, as torch, the inverse and counts are always written). The run count depends on the
// data: out0 and out2 are planned at its bound and resized.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/unique.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::unique_consecutive.out";

Error unique_consecutive_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  UniqueRequest request{kOp, -1, false, args[1]->b, args[2]->b};
  if (!args[3]->is_none()) {
    PTERON_TRY(normalize_dim(kOp, args[3]->i, self.dim(), &request.dim));
    request.inverse = request.counts = true;
  }
  return unique_groups(ctx, self, request, *args[4]->tensor, *args[5]->tensor, *args[6]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::unique_consecutive.out", unique_consecutive_out, "TBBiTTT");

}  // namespace pteron
