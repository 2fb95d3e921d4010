// aten::gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self > other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error gt_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::gt.Tensor_out", args, std::greater<>());
}

Error gt_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::gt.Scalar_out", args, std::greater<>());
}

}  // namespace

PTERON_KERNEL("aten::gt.Tensor_out", gt_tensor_out, "TTT");
PTERON_KERNEL("aten::gt.Scalar_out", gt_scalar_out, "TST");

}  // namespace pteron
