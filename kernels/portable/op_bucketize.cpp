// aten::bucketize.Tensor_out(Tensor self, Tensor boundaries, *, bool out_int32=False,
//     bool right=False, Tensor(a!) out)
// out = the bucket of each value among the sorted 1-D boundaries (searchsorted with the
// arguments swapped).
#include "kernels/portable/util/search_sorted.h"

namespace pteron {
namespace {

Error bucketize_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::bucketize.Tensor_out";
  const Tensor& boundaries = *args[1]->tensor;
  PTERON_CHECK(boundaries.dim() == 1, Error::InvalidArgument,
               "%s: boundaries must be 1-D, got %d dims", kOp, static_cast<int>(boundaries.dim()));
  return search_sorted(kOp, boundaries, args[0]->tensor, nullptr, args[2]->b, args[3]->b, nullptr,
                       *args[4]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::bucketize.Tensor_out", bucketize_tensor_out, "TTBBT");

}  // namespace pteron
