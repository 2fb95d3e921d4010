// dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False, int[]?
// dim_order=None, Tensor(a!) out) -> Tensor(a!): the layout change the compiler puts at a
// delegate's boundary (NCHW <-> XNNPACK's NHWC) and ExecuTorch's clone to a memory format.
// 4-byte elements whose innermost dim changes run as threaded SIMD transposes
// (util/transpose_copy.h): MobileNetV3's 25 boundary copies took a quarter of its XNNPACK
// program's time as the portable kernel's element-by-element strided copy. Anything else (same
// innermost dim, other element sizes) and every check go through the portable kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/transpose_copy.h"
#include "kernels/portable/util/dim_order.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "dim_order_ops::_clone_dim_order.out";

Error clone_dim_order_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  const int32_t rank = self.dim();
  if (self.element_size() != 4 || out.dtype() != self.dtype() || out.dim() != rank || rank < 2 ||
      check_dim_order_arg(kOp, *args[2], self, out) != Error::Ok) {
    return optimized::call_portable(kOp, ctx, args);  // it copies or reports what is wrong
  }
  // Output dims in the output's memory order; a is where the input's innermost dim went.
  optimized::TransposeCopy t;
  t.in = self.data<const float>();
  t.out = out.data<float>();
  t.rank = rank;
  const Span<const uint8_t> out_order = out.dim_order();
  const int32_t self_innermost = self.dim_order()[rank - 1];
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t d = out_order[i];
    if (self.size(d) != out.size(d)) return optimized::call_portable(kOp, ctx, args);
    t.sizes[i] = self.size(d);
    t.in_strides[i] = self.stride(d);
    t.out_strides[i] = out.stride(d);
    if (d == self_innermost) t.a = i;
  }
  if (!optimized::is_transpose_copy(t)) return optimized::call_portable(kOp, ctx, args);
  optimized::run_transpose_copy(t);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("dim_order_ops::_clone_dim_order.out", clone_dim_order_out, "TBlT");

}  // namespace pteron::opt
