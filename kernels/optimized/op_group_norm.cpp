// Optimized float32 normalisations over planes, split over threads:
//   aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C,
//       SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     (GroupNorm: diffusion UNets, Conv-TasNet's global layer norm, GroupNorm(1, C))
//   aten::_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias,
//       bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean,
//       Tensor(c!) save_invstd)
//     (what InstanceNorm exports to: batch norm with batch statistics over [1, N * C, H, W])
// The portable kernels run them on one thread, one element at a time (Conv-TasNet's nine
// GroupNorm(1, 128) over [2, 128, 2000]: 27% of its time). Here every (image, channel) plane
// of the row-major input is a unit of work: its sum, then its squared deviations from its
// set's mean (a group of one image, or a channel over the batch), in double over blocks
// (blocked_sum), then the plane normalised with its channel's weight and bias folded in.
// Other dtypes, layouts and every error go to the portable kernels.
#include <cmath>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

bool plain_float(const Tensor* t) {
  return t == nullptr || (t->dtype() == ScalarType::Float && is_row_major(*t));
}

// N images of C planes of HxW floats; plane p = n * C + c belongs to set set_of(p), whose
// statistics cover `count` elements.
struct Planes {
  const float* x;
  float* y;
  int64_t N, C, HxW;
  const float* weight;  // C values or null
  const float* bias;
  double eps;
};

// Normalises every plane by its set's mean and 1 / sqrt(var + eps) (biased variance), writing
// them to mean_out / rstd_out (one per set); false when scratch is short (the caller hands the
// call to portable).
template <typename SetOf>
bool normalize_planes(KernelContext& ctx, const Planes& a, int64_t sets, int64_t count,
                      SetOf set_of, float* mean_out, float* rstd_out) {
  const int64_t planes = a.N * a.C;
  auto* partial = static_cast<double*>(ctx.allocate_scratch(sizeof(double) * planes, 64));
  auto* mean = static_cast<double*>(ctx.allocate_scratch(sizeof(double) * sets, 64));
  auto* var = static_cast<double*>(ctx.allocate_scratch(sizeof(double) * sets, 64));
  if (partial == nullptr || mean == nullptr || var == nullptr) return false;
  const IsaKernels& isa = isa_kernels();
  const int64_t hw = a.HxW;
  // Two passes (the mean, then squared deviations from it): no cancellation for planes far
  // from zero.
  parallel_for(planes, hw, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      // Deviations from the plane's first value: a float sum of values far from zero (1000 +- 3)
      // loses the digits the normalised output needs.
      const float* x = a.x + p * hw;
      const float center = std::isfinite(x[0]) ? x[0] : 0.0f;  // inf - inf would be NaN
      partial[p] = isa.blocked_sum(x, hw, center, false) + static_cast<double>(center) * hw;
    }
  });
  for (int64_t s = 0; s < sets; ++s) mean[s] = var[s] = 0;
  for (int64_t p = 0; p < planes; ++p) mean[set_of(p)] += partial[p];
  for (int64_t s = 0; s < sets; ++s) mean[s] /= static_cast<double>(count);
  parallel_for(planes, hw, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float m = static_cast<float>(mean[set_of(p)]);
      partial[p] = isa.blocked_sum(a.x + p * hw, hw, m, true);
    }
  });
  for (int64_t p = 0; p < planes; ++p) var[set_of(p)] += partial[p];
  double* rstd = var;  // in place
  for (int64_t s = 0; s < sets; ++s) {
    rstd[s] = 1.0 / std::sqrt(var[s] / static_cast<double>(count) + a.eps);
    mean_out[s] = static_cast<float>(mean[s]);
    rstd_out[s] = static_cast<float>(rstd[s]);
  }
  parallel_for(planes, hw, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t c = p % a.C, s = set_of(p);
      const float w = a.weight != nullptr ? a.weight[c] : 1.0f;
      const float b = a.bias != nullptr ? a.bias[c] : 0.0f;
      const float low = static_cast<float>(mean[s] - static_cast<double>(mean_out[s]));
      isa.normalize(a.x + p * hw, a.y + p * hw, hw, mean_out[s], low,
                    static_cast<float>(rstd[s] * w), b);
    }
  });
  return true;
}

const Tensor* optional_tensor(const EValue* v) { return v->is_none() ? nullptr : v->tensor; }

bool per_channel_or_none(const Tensor* t, int64_t C) {
  return t == nullptr || (plain_float(t) && t->numel() == C);
}

Error native_group_norm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::native_group_norm.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor* weight = optional_tensor(args[1]);
  const Tensor* bias = optional_tensor(args[2]);
  const int64_t N = args[3]->i, C = args[4]->i, HxW = args[5]->i, G = args[6]->i;
  Tensor& out = *args[8]->tensor;
  Tensor& mean_out = *args[9]->tensor;
  Tensor& rstd_out = *args[10]->tensor;
  const bool fast = input.dim() >= 2 && plain_float(&input) && plain_float(&out) &&
                    plain_float(&mean_out) && plain_float(&rstd_out) && N > 0 && HxW > 0 && G > 0 &&
                    C > 0 && C % G == 0 && input.size(0) == N && input.size(1) == C &&
                    input.numel() == N * C * HxW && per_channel_or_none(weight, C) &&
                    per_channel_or_none(bias, C);
  if (!fast) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  const int32_t stat_sizes[] = {static_cast<int32_t>(N), static_cast<int32_t>(G)};
  PTERON_TRY(expect_out_shape(kOp, mean_out, stat_sizes, 2));
  PTERON_TRY(expect_out_shape(kOp, rstd_out, stat_sizes, 2));
  const Planes a{input.data<const float>(),
                 out.data<float>(),
                 N,
                 C,
                 HxW,
                 weight ? weight->data<const float>() : nullptr,
                 bias ? bias->data<const float>() : nullptr,
                 args[7]->scalar_as_double()};
  const int64_t per_group = C / G;
  const bool done = normalize_planes(
      ctx, a, N * G, per_group * HxW, [=](int64_t p) { return (p / C) * G + (p % C) / per_group; },
      mean_out.data<float>(), rstd_out.data<float>());
  return done ? Error::Ok : optimized::call_portable(kOp, ctx, args);
}

Error batch_norm_no_stats_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_native_batch_norm_legit.no_stats_out";
  const Tensor& input = *args[0]->tensor;
  const Tensor* weight = optional_tensor(args[1]);
  const Tensor* bias = optional_tensor(args[2]);
  Tensor& out = *args[6]->tensor;
  Tensor& save_mean = *args[7]->tensor;
  Tensor& save_invstd = *args[8]->tensor;
  const bool training = args[3]->tag == Tag::Bool && args[3]->b;
  const int64_t N = input.dim() >= 2 ? input.size(0) : 0, C = input.dim() >= 2 ? input.size(1) : 0;
  const bool fast = training && N > 0 && C > 0 && input.numel() > 0 && plain_float(&input) &&
                    plain_float(&out) && plain_float(&save_mean) && plain_float(&save_invstd) &&
                    save_mean.numel() == C && save_invstd.numel() == C &&
                    per_channel_or_none(weight, C) && per_channel_or_none(bias, C);
  if (!fast) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  const int64_t HxW = input.numel() / (N * C);
  const Planes a{input.data<const float>(),
                 out.data<float>(),
                 N,
                 C,
                 HxW,
                 weight ? weight->data<const float>() : nullptr,
                 bias ? bias->data<const float>() : nullptr,
                 args[5]->scalar_as_double()};
  const bool done = normalize_planes(
      ctx, a, C, N * HxW, [=](int64_t p) { return p % C; }, save_mean.data<float>(),
      save_invstd.data<float>());
  return done ? Error::Ok : optimized::call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::native_group_norm.out", native_group_norm_out, "TttIIIIDTTT");
PTERON_KERNEL("aten::_native_batch_norm_legit.no_stats_out", batch_norm_no_stats_out, "TttBDDTTT");

}  // namespace pteron::opt
