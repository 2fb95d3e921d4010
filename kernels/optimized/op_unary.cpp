// Optimized float32 activations on contiguous tensors, split over threads:
//   aten::gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out)  (erf or tanh form)
//   aten::relu.out(Tensor self, *, Tensor(a!) out)
//   aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out)
//     (mobilenet's ReLU6: a clamp the compiler vectorises; NaN stays NaN)
// Other dtypes, layouts and bad arguments go through the portable kernels.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

bool plain_float(const Tensor& in, const Tensor& out) {
  return in.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float && is_row_major(in) &&
         is_row_major(out);
}

Error gelu_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::gelu.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  if (!plain_float(in, out) || args[1]->tag != Tag::String)
    return optimized::call_portable(kOp, ctx, args);
  const bool tanh_form = string_equals(*args[1], "tanh");
  if (!tanh_form && !string_equals(*args[1], "none"))
    return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, in.sizes().data(), in.dim()));
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_elementwise(in.numel(), 16,
                       [&](int64_t at, int64_t n) { isa.gelu(x + at, y + at, n, tanh_form); });
  return Error::Ok;
}

Error relu_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::relu.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  if (!plain_float(in, out)) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, in.sizes().data(), in.dim()));
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_elementwise(in.numel(), 1, [&](int64_t at, int64_t n) { isa.relu(x + at, y + at, n); });
  return Error::Ok;
}

Error hardtanh_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::hardtanh.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  if (!plain_float(in, out)) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, in.sizes().data(), in.dim()));
  const float lo = static_cast<float>(args[1]->scalar_as_double());
  const float hi = static_cast<float>(args[2]->scalar_as_double());
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  parallel_elementwise(in.numel(), 1, [&](int64_t at, int64_t n) {
    // Two one-sided selects vectorise; the nested form became unpredictable branches.
    for (int64_t i = at; i < at + n; ++i) {
      float v = x[i];
      v = v < lo ? lo : v;
      y[i] = v > hi ? hi : v;
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::gelu.out", gelu_out, "T*T");
PTERON_KERNEL("aten::relu.out", relu_out, "TT");
PTERON_KERNEL("aten::hardtanh.out", hardtanh_out, "TSST");

}  // namespace pteron::opt
