// aten::ne.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::ne.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self != other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error ne_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::ne.Tensor_out", args, std::not_equal_to<>());
}

Error ne_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::ne.Scalar_out", args, std::not_equal_to<>());
}

}  // namespace

PTERON_KERNEL("aten::ne.Tensor_out", ne_tensor_out, "TTT");
PTERON_KERNEL("aten::ne.Scalar_out", ne_scalar_out, "TST");

}  // namespace pteron
