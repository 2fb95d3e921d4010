// aten::bitwise_right_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_right_shift.Tensor_Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::bitwise_right_shift.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out)
// Integer shifts with torch's rules for out-of-range amounts (util/shift.h).
#include "kernels/portable/util/shift.h"

namespace pteron {
namespace {

Error bitwise_right_shift_tensor_out(KernelContext&, Span<EValue*> args) {
  return shift_tensor_out<false>("aten::bitwise_right_shift.Tensor_out", args);
}

Error bitwise_right_shift_scalar_out(KernelContext&, Span<EValue*> args) {
  return shift_scalar_out<false>("aten::bitwise_right_shift.Tensor_Scalar_out", args);
}

Error bitwise_right_shift_scalar_tensor_out(KernelContext&, Span<EValue*> args) {
  return shift_scalar_tensor_out<false>("aten::bitwise_right_shift.Scalar_Tensor_out", args);
}

}  // namespace

PTERON_KERNEL("aten::bitwise_right_shift.Tensor_out", bitwise_right_shift_tensor_out, "TTT");
PTERON_KERNEL("aten::bitwise_right_shift.Tensor_Scalar_out", bitwise_right_shift_scalar_out, "TST");
PTERON_KERNEL("aten::bitwise_right_shift.Scalar_Tensor_out", bitwise_right_shift_scalar_tensor_out,
              "STT");

}  // namespace pteron
