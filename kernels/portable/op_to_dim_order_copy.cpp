// dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, int[]?
// dim_order=None, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dim_order.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// ExecuTorch's replacement for aten::_to_copy: converts dtype (self's to out's) and layout (to
// the requested dim order, which out was planned with) in one pass. non_blocking has no meaning
// on a CPU and is ignored.
Error to_dim_order_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "dim_order_ops::_to_dim_order_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  PTERON_TRY(check_dim_order_arg(kOp, *args[2], self, out));
  return copy_tensor(kOp, self, out);
}

}  // namespace

PTERON_KERNEL("dim_order_ops::_to_dim_order_copy.out", to_dim_order_copy_out, "TBlT");

}  // namespace pteron
