// Optimized float32 softmax / log-softmax over the last dim of a contiguous tensor, rows split
// over threads:
//   aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
//   aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
// Other dims, dtypes and layouts go through the portable kernels.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

Error softmax_common(const char* op, bool log, KernelContext& ctx, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  const int64_t dim = args[1]->i;
  const bool last = in.dim() > 0 && (dim == -1 || dim == in.dim() - 1);
  if (!last || args[2]->b || in.dtype() != ScalarType::Float || out.dtype() != ScalarType::Float ||
      !is_row_major(in) || !is_row_major(out) || in.size(in.dim() - 1) == 0) {
    return optimized::call_portable(op, ctx, args);
  }
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  const int64_t n = in.size(in.dim() - 1);
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_for(in.numel() / n, n * 8, [&](int64_t begin, int64_t end) {
    isa.softmax(x + begin * n, y + begin * n, end - begin, n, log);
  });
  return Error::Ok;
}

Error softmax_out(KernelContext& ctx, Span<EValue*> args) {
  return softmax_common("aten::_softmax.out", false, ctx, args);
}
Error log_softmax_out(KernelContext& ctx, Span<EValue*> args) {
  return softmax_common("aten::_log_softmax.out", true, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::_softmax.out", softmax_out, "TIBT");
PTERON_KERNEL("aten::_log_softmax.out", log_softmax_out, "TIBT");

}  // namespace pteron::opt
