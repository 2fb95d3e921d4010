// aten::le.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::le.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self <= other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error le_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::le.Tensor_out", args, std::less_equal<>());
}

Error le_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::le.Scalar_out", args, std::less_equal<>());
}

}  // namespace

PTERON_KERNEL("aten::le.Tensor_out", le_tensor_out, "TTT");
PTERON_KERNEL("aten::le.Scalar_out", le_scalar_out, "TST");

}  // namespace pteron
