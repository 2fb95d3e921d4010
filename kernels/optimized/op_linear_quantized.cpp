// Linears with quantized weights, the ops compiler/passes/quantized_linear.cpp puts in place
// of torchao's dequantize_affine -> linear patterns (and pteron's own --quantize llm-*):
//   pteron::linear_q8w.out(Tensor input, Tensor weight, Tensor scales, Tensor? bias,
//       int group_size, *, Tensor(a!) out)        int8 weights [N, K] (one byte each)
//   pteron::linear_q4w.out(... same ...)          int4 weights packed [N, K / 2] (uint8)
//   pteron::linear_8da4w.out(Tensor input, Tensor weight, Tensor scales, Tensor weight_sums,
//       Tensor? bias, int group_size, float eps, *, Tensor(a!) out)
//                                                 int4 weights in panels of 16 channels
//                                                 [P, K / 8, 64] (uint8), P = ceil(N / 16)
//   pteron::linear_8da8w.out(Tensor input, Tensor weight, Tensor scales, Tensor? bias,
//       int group_size, float eps, *, Tensor(a!) out)   int8 weights [N, K]
// Weight-only scales [N, K / group_size], 8da4w's [P, K / group_size, 16] (the panel layout of
// qlinear/qlinear_kernels.h), float32: weight = q * scale of its group. input [..., K] float32,
// out [..., N] float32, N = weight_sums' length for 8da4w.
// 8da4w quantizes each input row to int8 as torchao's choose_qparams_affine(ASYMMETRIC,
// [1, K], int8) + quantize_affine do (scale = (max(x, 0) - min(x, 0)) / 255 clamped to eps,
// zero point -128 - round(min / scale)), then per group sums int4 x int8 products in int32
// and scales them:  out = sx * (sum_g sw_g * I_g) - sx * zx * weight_sums[n] + bias, where
// I_g = sum_{k in g} q_k * xq_k and weight_sums[n] = sum_k q_k * sw (made at compile time).
// The table's a8w4_tile keeps 16 channels per vector lane group, so group sums are never
// reduced across lanes and the group scales are applied in registers. Decode (one row)
// streams each panel once, four at a time; prefill runs tiles of rows x panels, the panel
// staying in cache while all rows pass. Threads split the panels.
// 8da8w (torchao's Int8DynamicActivationIntxWeightConfig with int8 weights) quantizes its rows
// the same way, dequantizes them back (what torchao's eager model multiplies) and runs the
// int8 weight-only product on them (qlinear/qlinear_run.h says why).
// Weight-only kernels: decode four rows per weight pass and blocks of channels; prefill (8+
// rows) on the SGEMM with the weights dequantized into its packed panels.
#include <cmath>

#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "kernels/optimized/qlinear/qlinear_run.h"
#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

enum class Kind { Q8W, Q4W };

Error check_problem(Kind kind, const char* op, const Tensor& input, const Tensor& weight,
                    const Tensor& scales, const Tensor* bias, int64_t G, Tensor& out,
                    WeightOnlyProblem* p) {
  PTERON_CHECK(input.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float &&
                   scales.dtype() == ScalarType::Float &&
                   (bias == nullptr || bias->dtype() == ScalarType::Float),
               Error::InvalidArgument, "%s: input, scales, bias and out must be float32", op);
  PTERON_CHECK(input.dim() >= 1 && weight.dim() == 2 && scales.dim() == 2, Error::InvalidArgument,
               "%s: input must be [..., K], weight and scales 2-d", op);
  PTERON_CHECK(input.is_contiguous() && weight.is_contiguous() && scales.is_contiguous() &&
                   out.is_contiguous() && (bias == nullptr || bias->is_contiguous()),
               Error::NotSupported, "%s: only contiguous tensors are supported", op);
  const int64_t K = input.size(input.dim() - 1), N = weight.size(0);
  PTERON_TRY(check_weight_only_layout(op, kind == Kind::Q4W, K, G, N, weight, scales, 0));
  PTERON_CHECK(bias == nullptr || bias->numel() == N, Error::InvalidArgument,
               "%s: bias must have N = %lld elements", op, static_cast<long long>(N));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[input.dim() - 1] = static_cast<int32_t>(N);
  PTERON_TRY(expect_out_shape(op, out, sizes, input.dim()));
  p->M = K == 0 ? 0 : input.numel() / K;
  p->K = K;
  p->N = N;
  p->G = G;
  p->x = input.data<const float>();
  p->w = weight.const_data();
  p->scales = scales.data<const float>();
  p->bias = bias == nullptr ? nullptr : bias->data<const float>();
  p->y = out.data<float>();
  return Error::Ok;
}

Error check_8da4w(Span<EValue*> args, A8W4Problem* p, const float** x) {
  constexpr const char* kOp = "pteron::linear_8da4w.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor& scales = *args[2]->tensor;
  const Tensor& sums = *args[3]->tensor;
  const Tensor* bias = args[4]->is_none() ? nullptr : args[4]->tensor;
  const int64_t G = args[5]->i;
  Tensor& out = *args[7]->tensor;
  PTERON_CHECK(input.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float &&
                   scales.dtype() == ScalarType::Float && sums.dtype() == ScalarType::Float &&
                   (bias == nullptr || bias->dtype() == ScalarType::Float),
               Error::InvalidArgument,
               "%s: input, scales, weight_sums, bias and out must be float32", kOp);
  PTERON_CHECK(input.dim() >= 1 && sums.dim() == 1, Error::InvalidArgument,
               "%s: input must be [..., K], weight_sums [N]", kOp);
  PTERON_CHECK(input.is_contiguous() && weight.is_contiguous() && scales.is_contiguous() &&
                   sums.is_contiguous() && out.is_contiguous() &&
                   (bias == nullptr || bias->is_contiguous()),
               Error::NotSupported, "%s: only contiguous tensors are supported", kOp);
  const int64_t K = input.size(input.dim() - 1), N = sums.size(0);
  PTERON_TRY(check_8da4w_layout(kOp, K, G, N, weight, scales, 0));
  PTERON_CHECK(bias == nullptr || bias->numel() == N, Error::InvalidArgument,
               "%s: bias must have N = %lld elements", kOp, static_cast<long long>(N));
  const double eps = args[6]->scalar_as_double();
  PTERON_CHECK(eps > 0.0 && std::isfinite(eps), Error::InvalidArgument,
               "%s: eps must be positive, got %g", kOp, eps);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[input.dim() - 1] = static_cast<int32_t>(N);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  p->M = K == 0 ? 0 : input.numel() / K;
  p->K = K;
  p->N = N;
  p->G = G;
  *x = input.data<const float>();
  p->w = weight.data<const uint8_t>();
  p->scales = scales.data<const float>();
  p->weight_sums = sums.data<const float>();
  p->bias = bias == nullptr ? nullptr : bias->data<const float>();
  p->y = out.data<float>();
  return Error::Ok;
}

// The weight-only kernels, (x, weight, scales, bias?, group_size, out); they differ only in
// the weight's kind.
Error weight_only_out(KernelContext& ctx, const char* op, Kind kind, Span<EValue*> args) {
  WeightOnlyProblem p;
  PTERON_TRY(check_problem(kind, op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                           args[3]->is_none() ? nullptr : args[3]->tensor, args[4]->i,
                           *args[5]->tensor, &p));
  run_weight_only(ctx, p, kind == Kind::Q4W);
  return Error::Ok;
}

Error linear_q8w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::linear_q8w.out", Kind::Q8W, args);
}

Error linear_q4w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::linear_q4w.out", Kind::Q4W, args);
}

Error linear_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  A8W4Problem p;
  const float* x = nullptr;
  PTERON_TRY(check_8da4w(args, &p, &x));
  if (p.M == 0 || p.N == 0) return Error::Ok;
  A8Activations a;
  PTERON_TRY(quantize_activations(ctx, "pteron::linear_8da4w.out", x, p.M, p.K, p.G,
                                  static_cast<float>(args[6]->scalar_as_double()), &a));
  run_8da4w(p, a);
  return Error::Ok;
}

// (x, weight, scales, bias?, group_size, eps, out): the weight-only int8 arguments and eps.
Error linear_8da8w_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "pteron::linear_8da8w.out";
  WeightOnlyProblem p;
  PTERON_TRY(check_problem(Kind::Q8W, kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                           args[3]->is_none() ? nullptr : args[3]->tensor, args[4]->i,
                           *args[6]->tensor, &p));
  const double eps = args[5]->scalar_as_double();
  PTERON_CHECK(eps > 0.0 && std::isfinite(eps), Error::InvalidArgument,
               "%s: eps must be positive, got %g", kOp, eps);
  if (p.M == 0 || p.N == 0) return Error::Ok;
  return run_8da8w(ctx, kOp, p, static_cast<float>(eps));
}

}  // namespace

PTERON_KERNEL("pteron::linear_q8w.out", linear_q8w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_q4w.out", linear_q4w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_8da4w.out", linear_8da4w_out, "TTTTtIDT");
PTERON_KERNEL("pteron::linear_8da8w.out", linear_8da8w_out, "TTTtIDT");

}  // namespace pteron::opt
