// aten::eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self == other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error eq_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::eq.Tensor_out", args, std::equal_to<>());
}

Error eq_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::eq.Scalar_out", args, std::equal_to<>());
}

}  // namespace

PTERON_KERNEL("aten::eq.Tensor_out", eq_tensor_out, "TTT");
PTERON_KERNEL("aten::eq.Scalar_out", eq_scalar_out, "TST");

}  // namespace pteron
