// Optimized float32 sigmoid and SiLU-gated products on contiguous tensors, split over threads:
//   aten::sigmoid.out(Tensor self, *, Tensor(a!) out)  (other dtypes and layouts: portable)
//   pteron::silu_mul.out(Tensor x, Tensor? other, *, Tensor(a!) out) -> Tensor(a!)
//     out = (x * sigmoid(x)) * other, or x * sigmoid(x) without other: the SwiGLU gate
//     (Llama, Mistral, Qwen MLPs: down(silu(gate(h)) * up(h))) in one pass instead of three;
//     compiler/passes/fuse_silu_mul.cpp makes it from mul(mul(x, sigmoid(x)), other).
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

// ~16 operations per element: the exponential and a division.
constexpr int64_t kCost = 16;

bool plain_float(const Tensor& t) { return t.dtype() == ScalarType::Float && is_row_major(t); }

Error sigmoid_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sigmoid.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  if (!plain_float(in) || !plain_float(out)) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, in.sizes().data(), in.dim()));
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_elementwise(in.numel(), kCost,
                       [&](int64_t at, int64_t n) { isa.sigmoid(x + at, y + at, n); });
  return Error::Ok;
}

Error silu_mul_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "pteron::silu_mul.out";
  const Tensor& x = *args[0]->tensor;
  const Tensor* other = args[1]->is_none() ? nullptr : args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  for (const Tensor* t : {&x, other, static_cast<const Tensor*>(&out)}) {
    if (t == nullptr) continue;
    PTERON_CHECK(t->dtype() == ScalarType::Float, Error::InvalidArgument,
                 "%s: x, other and out must be float32, got %s", kOp, scalar_type_name(t->dtype()));
    PTERON_CHECK(is_row_major(*t), Error::NotSupported,
                 "%s: only the default dim order is supported", kOp);
  }
  if (other != nullptr) {
    bool same = other->dim() == x.dim();
    for (int32_t d = 0; same && d < x.dim(); ++d) same = other->size(d) == x.size(d);
    PTERON_CHECK(same, Error::InvalidArgument,
                 "%s: other's shape differs from x's (no broadcasting)", kOp);
  }
  PTERON_TRY(expect_out_shape(kOp, out, x.sizes().data(), x.dim()));
  const float* xp = x.data<const float>();
  const float* up = other ? other->data<const float>() : nullptr;
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_elementwise(x.numel(), kCost, [&](int64_t at, int64_t n) {
    isa.silu_mul(xp + at, up ? up + at : nullptr, y + at, n);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::sigmoid.out", sigmoid_out, "TT");
PTERON_KERNEL("pteron::silu_mul.out", silu_mul_out, "TtT");

}  // namespace pteron::opt
