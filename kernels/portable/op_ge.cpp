// aten::ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self >= other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error ge_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::ge.Tensor_out", args, std::greater_equal<>());
}

Error ge_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::ge.Scalar_out", args, std::greater_equal<>());
}

}  // namespace

PTERON_KERNEL("aten::ge.Tensor_out", ge_tensor_out, "TTT");
PTERON_KERNEL("aten::ge.Scalar_out", ge_scalar_out, "TST");

}  // namespace pteron
