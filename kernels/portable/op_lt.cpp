// aten::lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = self < other, written as bool (or 0/1 in another out dtype).
#include <functional>

#include "kernels/portable/util/compare.h"

namespace pteron {
namespace {

Error lt_tensor_out(KernelContext&, Span<EValue*> args) {
  return compare_tensor_out("aten::lt.Tensor_out", args, std::less<>());
}

Error lt_scalar_out(KernelContext&, Span<EValue*> args) {
  return compare_scalar_out("aten::lt.Scalar_out", args, std::less<>());
}

}  // namespace

PTERON_KERNEL("aten::lt.Tensor_out", lt_tensor_out, "TTT");
PTERON_KERNEL("aten::lt.Scalar_out", lt_scalar_out, "TST");

}  // namespace pteron
