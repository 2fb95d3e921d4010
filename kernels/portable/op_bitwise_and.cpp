// aten::bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_and.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace pteron {
namespace {

Error bitwise_and_out(KernelContext&, Span<EValue*> args) {
  return bitwise_tensor_out("aten::bitwise_and.Tensor_out", args,
                            [](auto x, auto y) { return x & y; });
}

Error bitwise_and_scalar_out(KernelContext&, Span<EValue*> args) {
  return bitwise_scalar_out("aten::bitwise_and.Scalar_out", args,
                            [](auto x, auto y) { return x & y; });
}

}  // namespace

PTERON_KERNEL("aten::bitwise_and.Tensor_out", bitwise_and_out, "TTT");
PTERON_KERNEL("aten::bitwise_and.Scalar_out", bitwise_and_scalar_out, "TST");

}  // namespace pteron
