// pteron::rms_norm.out(Tensor x, Tensor? weight, float eps, *, Tensor(a!) out) -> Tensor(a!)
//   out = (x * rsqrt(mean(x^2, -1, keepdim) + eps)) * weight   (weight [D] or none)
// RMSNorm (Llama, Mistral, Qwen, T5) in one pass per row instead of six kernels (pow, mean, add,
// rsqrt, two muls) and three full-size intermediates; compiler/passes/fuse_rms_norm.cpp makes
// it from that decomposed chain. float32 in the default dim order, rows split over threads.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "pteron::rms_norm.out";

Error rms_norm_out(KernelContext&, Span<EValue*> args) {
  const Tensor& x = *args[0]->tensor;
  const Tensor* weight = args[1]->is_none() ? nullptr : args[1]->tensor;
  const float eps = static_cast<float>(args[2]->scalar_as_double());
  Tensor& out = *args[3]->tensor;
  for (const Tensor* t : {&x, weight, static_cast<const Tensor*>(&out)}) {
    if (t == nullptr) continue;
    PTERON_CHECK(t->dtype() == ScalarType::Float, Error::InvalidArgument,
                 "%s: x, weight and out must be float32, got %s", kOp,
                 scalar_type_name(t->dtype()));
    PTERON_CHECK(is_row_major(*t), Error::NotSupported,
                 "%s: only the default dim order is supported", kOp);
  }
  PTERON_CHECK(x.dim() >= 1, Error::InvalidArgument, "%s: x must have at least one dim", kOp);
  const int64_t D = x.size(x.dim() - 1);
  PTERON_CHECK(weight == nullptr || (weight->dim() == 1 && weight->size(0) == D),
               Error::InvalidArgument, "%s: weight must be [%lld] (x's last dim)", kOp,
               static_cast<long long>(D));
  PTERON_TRY(expect_out_shape(kOp, out, x.sizes().data(), x.dim()));
  if (x.numel() == 0) return Error::Ok;
  const float* xp = x.data<const float>();
  const float* w = weight ? weight->data<const float>() : nullptr;
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_for(x.numel() / D, D * 3, [&](int64_t begin, int64_t end) {
    isa.rms_norm(xp + begin * D, w, eps, end - begin, D, y + begin * D);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::rms_norm.out", rms_norm_out, "TtDT");

}  // namespace pteron::opt
