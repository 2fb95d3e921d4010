// aten::bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_xor.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace pteron {
namespace {

Error bitwise_xor_out(KernelContext&, Span<EValue*> args) {
  return bitwise_tensor_out("aten::bitwise_xor.Tensor_out", args,
                            [](auto x, auto y) { return x ^ y; });
}

Error bitwise_xor_scalar_out(KernelContext&, Span<EValue*> args) {
  return bitwise_scalar_out("aten::bitwise_xor.Scalar_out", args,
                            [](auto x, auto y) { return x ^ y; });
}

}  // namespace

PTERON_KERNEL("aten::bitwise_xor.Tensor_out", bitwise_xor_out, "TTT");
PTERON_KERNEL("aten::bitwise_xor.Scalar_out", bitwise_xor_scalar_out, "TST");

}  // namespace pteron
