// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
//                 Tensor(a!) out) -> Tensor(a!)
// float32 on the optimized SGEMM (a [N] or [1, N] self with beta 1 is added in the GEMM's store,
// as a linear layer's bias); anything else on the portable kernel.
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::addmm.out";

Error addmm_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& a = *args[1]->tensor;
  const Tensor& b = *args[2]->tensor;
  const double beta = args[3]->scalar_as_double();
  const double alpha = args[4]->scalar_as_double();
  Tensor& out = *args[5]->tensor;
  if (!all_float32({&self, &a, &b, &out}) || a.dim() != 2 || b.dim() != 2 ||
      a.size(1) != b.size(0)) {
    return call_portable(kOp, ctx, args);
  }
  const int32_t sizes[] = {a.size(0), b.size(1)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  if (out.numel() > 0 && out.stride(1) != 1 && out.size(1) != 1) {
    return call_portable(kOp, ctx, args);
  }
  SgemmProblem p;
  p.M = a.size(0);
  p.N = b.size(1);
  p.K = a.size(1);
  p.a = a.data<const float>();
  p.a_rs = a.stride(0);
  p.a_cs = a.stride(1);
  p.b = b.data<const float>();
  p.b_rs = b.stride(0);
  p.b_cs = b.stride(1);
  p.a_cache = constant_cache_of(a);  // a constant operand is packed once
  p.b_cache = constant_cache_of(b);
  p.c = out.data<float>();
  p.c_rs = out.stride(0);
  p.alpha = static_cast<float>(alpha);
  // beta == 0 ignores self entirely (NaNs in it do not propagate), as torch does.
  if (beta == 0) {
    PTERON_TRY(expect_broadcasts_to(kOp, self, out));
  } else if (beta == 1 && is_column_bias(self, p.N)) {
    p.bias = self.data<const float>();
  } else {
    PTERON_TRY(broadcast_copy(kOp, self, out));
    p.beta = static_cast<float>(beta);
  }
  if (!sgemm(ctx, p)) return call_portable(kOp, ctx, args);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::addmm.out", addmm_out, "TTTSST");

}  // namespace pteron::optimized
