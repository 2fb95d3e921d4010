// A mixture-of-experts layer's product with quantized experts, what --quantize llm-int8 /
// llm-int4 / llm-8da4w (compiler/quantize/llm_quantize.cpp) puts in place of
// transformers::grouped_mm_fallback and aten::_grouped_mm over constant float experts:
//   pteron::grouped_mm_q8w.out(Tensor input, Tensor weight, Tensor scales, Tensor offs,
//       int group_size, *, Tensor(a!) out)      int8 experts [E, N, K]
//   pteron::grouped_mm_q4w.out(... same ...)    int4 experts packed [E, N, K / 2] (uint8)
//   pteron::grouped_mm_8da4w.out(Tensor input, Tensor weight, Tensor scales,
//       Tensor weight_sums, Tensor offs, int group_size, float eps, *, Tensor(a!) out)
//                                               int4 panels [E, P, K / 8, 64], sums [E, N]
// Each expert is the matrix of the quantized linear of the same name (op_linear_quantized.cpp
// says what it computes; layouts in qlinear/qlinear_kernels.h), scales one such table per
// expert. input [S, K] float32, rows sorted by expert: expert e takes the rows
// [offs[e - 1], offs[e]) (offs[-1] = 0), out [S, N] float32; rows past offs[E - 1] belong to no
// expert and are zero, as in pteron's float kernel. The offsets come from the router, so they
// are checked on every call. 8da4w quantizes every row once, then runs each expert's rows.
#include <cmath>

#include "kernels/optimized/qlinear/qlinear_run.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/grouped_mm.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

// The checks both forms share: input [S, K] and out [S, N] float32, the tensors contiguous,
// `offs` one per expert; sets S and K.
Error check_rows(const char* op, const Tensor& input, const Tensor& offs, int64_t experts,
                 int64_t N, Span<const Tensor* const> weights, Tensor& out, int64_t* S,
                 int64_t* K) {
  PTERON_CHECK(input.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float,
               Error::InvalidArgument, "%s: input and out must be float32", op);
  PTERON_CHECK(input.dim() == 2, Error::InvalidArgument, "%s: input must be [rows, K], got %d-D",
               op, input.dim());
  bool contiguous = input.is_contiguous() && out.is_contiguous();
  for (const Tensor* t : weights) {
    PTERON_CHECK(t->dim() >= 1 && t->size(0) == experts, Error::InvalidArgument,
                 "%s: every weight table must hold the %lld experts", op,
                 static_cast<long long>(experts));
    contiguous = contiguous && t->is_contiguous();
  }
  PTERON_CHECK(contiguous, Error::NotSupported, "%s: only contiguous tensors are supported", op);
  *S = input.size(0);
  *K = input.size(1);
  const int32_t sizes[] = {input.size(0), static_cast<int32_t>(N)};
  PTERON_TRY(expect_out_shape(op, out, sizes, 2));
  return check_grouped_offsets(op, offs, experts, *S);
}

// Runs run(e, first_row, rows) for each expert with rows (kernels/portable/util/grouped_mm.h),
// then zeroes the rows past the last expert's.
template <typename Run>
void for_each_expert(const Tensor& offs, int64_t experts, int64_t S, int64_t N, float* y,
                     Run&& run) {
  const int64_t start = for_each_group(offs, experts, run);
  for (int64_t i = start * N; i < S * N; ++i) y[i] = 0.0f;
}

Error weight_only_out(KernelContext& ctx, const char* op, bool int4, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor& scales = *args[2]->tensor;
  const Tensor& offs = *args[3]->tensor;
  const int64_t G = args[4]->i;
  Tensor& out = *args[5]->tensor;
  PTERON_CHECK(scales.dtype() == ScalarType::Float, Error::InvalidArgument,
               "%s: scales must be float32", op);
  PTERON_CHECK(weight.dim() == 3, Error::InvalidArgument, "%s: weight must be [experts, N, K]", op);
  const int64_t experts = weight.size(0), N = weight.size(1);
  const Tensor* tables[] = {&weight, &scales};
  int64_t S = 0, K = 0;
  PTERON_TRY(check_rows(op, input, offs, experts, N, tables, out, &S, &K));
  PTERON_TRY(check_weight_only_layout(op, int4, K, G, N, weight, scales, 1));
  const int64_t weight_bytes = N * (int4 ? K / 2 : K), scale_count = N * (K / G);
  const auto* w = static_cast<const uint8_t*>(weight.const_data());
  float* y = out.data<float>();
  for_each_expert(offs, experts, S, N, y, [&](int64_t e, int64_t row, int64_t rows) {
    run_weight_only(ctx,
                    {rows, K, N, G, input.data<const float>() + row * K, w + e * weight_bytes,
                     scales.data<const float>() + e * scale_count, nullptr, y + row * N},
                    int4);
  });
  return Error::Ok;
}

Error grouped_mm_q8w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::grouped_mm_q8w.out", false, args);
}

Error grouped_mm_q4w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::grouped_mm_q4w.out", true, args);
}

Error grouped_mm_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "pteron::grouped_mm_8da4w.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor& scales = *args[2]->tensor;
  const Tensor& sums = *args[3]->tensor;
  const Tensor& offs = *args[4]->tensor;
  const int64_t G = args[5]->i;
  const double eps = args[6]->scalar_as_double();
  Tensor& out = *args[7]->tensor;
  PTERON_CHECK(scales.dtype() == ScalarType::Float && sums.dtype() == ScalarType::Float,
               Error::InvalidArgument, "%s: scales and weight_sums must be float32", kOp);
  PTERON_CHECK(sums.dim() == 2, Error::InvalidArgument, "%s: weight_sums must be [experts, N]",
               kOp);
  PTERON_CHECK(eps > 0.0 && std::isfinite(eps), Error::InvalidArgument,
               "%s: eps must be positive, got %g", kOp, eps);
  const int64_t experts = sums.size(0), N = sums.size(1);
  const Tensor* tables[] = {&weight, &scales, &sums};
  int64_t S = 0, K = 0;
  PTERON_TRY(check_rows(kOp, input, offs, experts, N, tables, out, &S, &K));
  PTERON_TRY(check_8da4w_layout(kOp, K, G, N, weight, scales, 1));
  if (S == 0 || N == 0) return Error::Ok;
  A8Activations a;
  PTERON_TRY(quantize_activations(ctx, kOp, input.data<const float>(), S, K, G,
                                  static_cast<float>(eps), &a));
  const int64_t panels = weight.size(1), groups = K / G;
  const int64_t weight_bytes = panels * K * 8, scale_count = panels * groups * 16;
  float* y = out.data<float>();
  for_each_expert(offs, experts, S, N, y, [&](int64_t e, int64_t row, int64_t rows) {
    run_8da4w({rows, K, N, G, weight.data<const uint8_t>() + e * weight_bytes,
               scales.data<const float>() + e * scale_count, sums.data<const float>() + e * N,
               nullptr, y + row * N},
              a.from_row(row, K, G));
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::grouped_mm_q8w.out", grouped_mm_q8w_out, "TTTTIT");
PTERON_KERNEL("pteron::grouped_mm_q4w.out", grouped_mm_q4w_out, "TTTTIT");
PTERON_KERNEL("pteron::grouped_mm_8da4w.out", grouped_mm_8da4w_out, "TTTTTIDT");

}  // namespace pteron::opt
