// Optimized float32 activations on contiguous tensors, split over threads:
//   aten::gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out)  (erf or tanh form)
//   aten::relu.out(Tensor self, *, Tensor(a!) out)
//   aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out)
//     (mobilenet's ReLU6: a clamp the compiler vectorises; NaN stays NaN)
//   aten::hardswish.out(Tensor self, *, Tensor(a!) out)
//   aten::hardsigmoid.out(Tensor self, *, Tensor(a!) out)  (MobileNetV3's activation and gate)
//   aten::tanh.out(Tensor self, *, Tensor(a!) out)  (RNN cells, GAN outputs, pre-LN MLPs)
//   aten::leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out)  (YOLO, GANs)
//   aten::elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, out)
//     (ELU, and SELU / CELU, which decompose to it)
//   aten::{exp,expm1,log,log1p,sin,cos,sqrt,rsqrt,erf}.out(Tensor self, *, Tensor(a!) out)
//     (softplus and mish decompose to exp and log1p; positional encodings, SIREN: sin, cos;
//     hand-written exact GELUs: erf)
//   aten::{floor,ceil,trunc,round}.out(Tensor self, *, Tensor(a!) out)  (round: ties to even)
// The portable kernels ran these one element at a time through the C library, one thread
// (1M floats: leaky_relu 5.1 ms of mispredicted branches, sin 7.3 ms, eager 0.06 and 0.65).
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

// What every kernel here does once its own arguments are read: contiguous float32 `in` into
// `out` of its shape, `rows(x, y, n)` over chunks on threads (`cost`: work per element, in the
// threading threshold's units); anything else through the portable kernel.
template <typename Rows>
Error elementwise_out(const char* op, KernelContext& ctx, Span<EValue*> args, int64_t cost,
                      Rows&& rows) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[args.size() - 1]->tensor;
  if (!plain_float(in, out)) return optimized::call_portable(op, ctx, args);
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  const float* x = in.data<const float>();
  float* y = out.data<float>();
  parallel_elementwise(in.numel(), cost, [&](int64_t at, int64_t n) { rows(x + at, y + at, n); });
  return Error::Ok;
}

Error gelu_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::gelu.out";
  const bool known_form = args[1]->tag == Tag::String &&
                          (string_equals(*args[1], "tanh") || string_equals(*args[1], "none"));
  if (!known_form) return optimized::call_portable(kOp, ctx, args);
  const bool tanh_form = string_equals(*args[1], "tanh");
  const IsaKernels& isa = isa_kernels();
  return elementwise_out(kOp, ctx, args, 16, [&](const float* x, float* y, int64_t n) {
    isa.gelu(x, y, n, tanh_form);
  });
}

Error tanh_out(KernelContext& ctx, Span<EValue*> args) {
  const IsaKernels& isa = isa_kernels();
  return elementwise_out("aten::tanh.out", ctx, args, 16,
                         [&](const float* x, float* y, int64_t n) { isa.tanh(x, y, n); });
}

Error relu_out(KernelContext& ctx, Span<EValue*> args) {
  const IsaKernels& isa = isa_kernels();
  return elementwise_out("aten::relu.out", ctx, args, 1,
                         [&](const float* x, float* y, int64_t n) { isa.relu(x, y, n); });
}

Error hardtanh_out(KernelContext& ctx, Span<EValue*> args) {
  const float lo = static_cast<float>(args[1]->scalar_as_double());
  const float hi = static_cast<float>(args[2]->scalar_as_double());
  return elementwise_out("aten::hardtanh.out", ctx, args, 1,
                         [&](const float* x, float* y, int64_t n) {
                           // Two one-sided selects vectorise; the nested form became
                           // unpredictable branches.
                           for (int64_t i = 0; i < n; ++i) {
                             float v = x[i];
                             v = v < lo ? lo : v;
                             y[i] = v > hi ? hi : v;
                           }
                         });
}

// Work per element in the threading threshold's units (as tanh's 16 for a rational form).
constexpr int64_t kMathCost = 16;

template <UnaryMath kOp>
Error math_out(KernelContext& ctx, Span<EValue*> args, const char* op, int64_t cost) {
  const IsaKernels& isa = isa_kernels();
  return elementwise_out(op, ctx, args, cost, [&](const float* x, float* y, int64_t n) {
    isa.unary_math(kOp, x, y, n, nullptr);
  });
}

#define PTERON_MATH_KERNEL(name, kind, cost)                                  \
  Error name##_out(KernelContext& ctx, Span<EValue*> args) {                  \
    return math_out<UnaryMath::kind>(ctx, args, "aten::" #name ".out", cost); \
  }
PTERON_MATH_KERNEL(exp, kExp, kMathCost)
PTERON_MATH_KERNEL(expm1, kExpm1, kMathCost)
PTERON_MATH_KERNEL(log, kLog, kMathCost)
PTERON_MATH_KERNEL(log1p, kLog1p, kMathCost)
PTERON_MATH_KERNEL(sin, kSin, kMathCost)
PTERON_MATH_KERNEL(cos, kCos, kMathCost)
PTERON_MATH_KERNEL(sqrt, kSqrt, kMathCost)
PTERON_MATH_KERNEL(rsqrt, kRsqrt, kMathCost)
PTERON_MATH_KERNEL(erf, kErf, kMathCost)
PTERON_MATH_KERNEL(floor, kFloor, 1)
PTERON_MATH_KERNEL(ceil, kCeil, 1)
PTERON_MATH_KERNEL(trunc, kTrunc, 1)
PTERON_MATH_KERNEL(round, kRound, 1)
#undef PTERON_MATH_KERNEL

Error leaky_relu_out(KernelContext& ctx, Span<EValue*> args) {
  const float slope[1] = {static_cast<float>(args[1]->scalar_as_double())};
  const IsaKernels& isa = isa_kernels();
  return elementwise_out("aten::leaky_relu.out", ctx, args, 1,
                         [&](const float* x, float* y, int64_t n) {
                           isa.unary_math(UnaryMath::kLeakyRelu, x, y, n, slope);
                         });
}

Error elu_out(KernelContext& ctx, Span<EValue*> args) {
  // The coefficients as the portable kernel (and torch) forms them: alpha * scale in double.
  const double scale = args[2]->scalar_as_double();
  const float p[3] = {static_cast<float>(args[1]->scalar_as_double() * scale),
                      static_cast<float>(scale), static_cast<float>(args[3]->scalar_as_double())};
  const IsaKernels& isa = isa_kernels();
  return elementwise_out(
      "aten::elu.out", ctx, args, kMathCost,
      [&](const float* x, float* y, int64_t n) { isa.unary_math(UnaryMath::kElu, x, y, n, p); });
}

template <bool kSwish>
Error hard_activation_out(KernelContext& ctx, Span<EValue*> args) {
  const IsaKernels& isa = isa_kernels();
  return elementwise_out(
      kSwish ? "aten::hardswish.out" : "aten::hardsigmoid.out", ctx, args, 1,
      [&](const float* x, float* y, int64_t n) { isa.hard_activation(x, y, n, kSwish); });
}

}  // namespace

PTERON_KERNEL("aten::hardswish.out", hard_activation_out<true>, "TT");
PTERON_KERNEL("aten::hardsigmoid.out", hard_activation_out<false>, "TT");
PTERON_KERNEL("aten::gelu.out", gelu_out, "T*T");
PTERON_KERNEL("aten::relu.out", relu_out, "TT");
PTERON_KERNEL("aten::hardtanh.out", hardtanh_out, "TSST");
PTERON_KERNEL("aten::tanh.out", tanh_out, "TT");
PTERON_KERNEL("aten::leaky_relu.out", leaky_relu_out, "TST");
PTERON_KERNEL("aten::elu.out", elu_out, "TSSST");
PTERON_KERNEL("aten::exp.out", exp_out, "TT");
PTERON_KERNEL("aten::expm1.out", expm1_out, "TT");
PTERON_KERNEL("aten::log.out", log_out, "TT");
PTERON_KERNEL("aten::log1p.out", log1p_out, "TT");
PTERON_KERNEL("aten::sin.out", sin_out, "TT");
PTERON_KERNEL("aten::cos.out", cos_out, "TT");
PTERON_KERNEL("aten::sqrt.out", sqrt_out, "TT");
PTERON_KERNEL("aten::rsqrt.out", rsqrt_out, "TT");
PTERON_KERNEL("aten::erf.out", erf_out, "TT");
PTERON_KERNEL("aten::floor.out", floor_out, "TT");
PTERON_KERNEL("aten::ceil.out", ceil_out, "TT");
PTERON_KERNEL("aten::trunc.out", trunc_out, "TT");
PTERON_KERNEL("aten::round.out", round_out, "TT");

}  // namespace pteron::opt
