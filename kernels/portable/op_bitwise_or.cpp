// aten::bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_or.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace pteron {
namespace {

Error bitwise_or_out(KernelContext&, Span<EValue*> args) {
  return bitwise_tensor_out("aten::bitwise_or.Tensor_out", args,
                            [](auto x, auto y) { return x | y; });
}

Error bitwise_or_scalar_out(KernelContext&, Span<EValue*> args) {
  return bitwise_scalar_out("aten::bitwise_or.Scalar_out", args,
                            [](auto x, auto y) { return x | y; });
}

}  // namespace

PTERON_KERNEL("aten::bitwise_or.Tensor_out", bitwise_or_out, "TTT");
PTERON_KERNEL("aten::bitwise_or.Scalar_out", bitwise_or_scalar_out, "TST");

}  // namespace pteron
