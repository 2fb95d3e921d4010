// aten::__lshift__.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::__lshift__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// Integer shifts with torch's rules for out-of-range amounts (util/shift.h).
#include "kernels/portable/util/shift.h"

namespace pteron {
namespace {

Error lshift_tensor_out(KernelContext&, Span<EValue*> args) {
  return shift_tensor_out<true>("aten::__lshift__.Tensor_out", args);
}

Error lshift_scalar_out(KernelContext&, Span<EValue*> args) {
  return shift_scalar_out<true>("aten::__lshift__.Scalar_out", args);
}

}  // namespace

PTERON_KERNEL("aten::__lshift__.Tensor_out", lshift_tensor_out, "TTT");
PTERON_KERNEL("aten::__lshift__.Scalar_out", lshift_scalar_out, "TST");

}  // namespace pteron
