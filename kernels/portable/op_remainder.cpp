// aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// Python modulo: the result takes the divisor's sign. Integer remainder by zero is an error.
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/modulo.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr auto kRemainderValue = [](auto x, auto y, bool* zero) {
  return remainder_value(x, y, zero);
};

Error remainder_tensor_out(KernelContext&, Span<EValue*> args) {
  return modulo_tensor_out("aten::remainder.Tensor_out", "remainder", args, kRemainderValue);
}

Error remainder_scalar_out(KernelContext&, Span<EValue*> args) {
  return modulo_scalar_out("aten::remainder.Scalar_out", "remainder", args, kRemainderValue);
}

}  // namespace

PTERON_KERNEL("aten::remainder.Tensor_out", remainder_tensor_out, "TTT");
PTERON_KERNEL("aten::remainder.Scalar_out", remainder_scalar_out, "TST");

}  // namespace pteron
