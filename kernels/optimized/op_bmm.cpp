// aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
// float32 on the optimized SGEMM, the batch split into tasks with the rows and columns; anything
// else on the portable kernel.
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::bmm.out";

Error bmm_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  if (!all_float32({&a, &b, &out}) || a.dim() != 3 || b.dim() != 3 || a.size(0) != b.size(0) ||
      a.size(2) != b.size(1)) {
    return call_portable(kOp, ctx, args);
  }
  const int32_t sizes[] = {a.size(0), a.size(1), b.size(2)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 3));
  if (out.numel() > 0 && out.stride(2) != 1 && out.size(2) != 1) {
    return call_portable(kOp, ctx, args);
  }
  SgemmProblem p;
  p.batch = a.size(0);
  p.M = a.size(1);
  p.N = b.size(2);
  p.K = a.size(2);
  p.a = a.data<const float>();
  p.a_bs = a.stride(0);
  p.a_rs = a.stride(1);
  p.a_cs = a.stride(2);
  p.b = b.data<const float>();
  p.b_bs = b.stride(0);
  p.b_rs = b.stride(1);
  p.b_cs = b.stride(2);
  p.a_cache = constant_cache_of(a);  // a constant operand broadcast over the batch is
  p.b_cache = constant_cache_of(b);  // packed once
  p.c = out.data<float>();
  p.c_bs = out.stride(0);
  p.c_rs = out.stride(1);
  if (!sgemm(ctx, p)) return call_portable(kOp, ctx, args);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::bmm.out", bmm_out, "TTT");

}  // namespace pteron::optimized
