// dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False, int[]?
// dim_order=None, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dim_order.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// ExecuTorch's replacement for aten::clone with a memory format: copies self into out's dim
// order (the requested one). Same dtype; non_blocking is ignored.
Error clone_dim_order_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "dim_order_ops::_clone_dim_order.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  PTERON_TRY(check_dim_order_arg(kOp, *args[2], self, out));
  return copy_tensor(kOp, self, out);
}

}  // namespace

PTERON_KERNEL("dim_order_ops::_clone_dim_order.out", clone_dim_order_out, "TBlT");

}  // namespace pteron
