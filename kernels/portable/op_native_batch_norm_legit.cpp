// aten::_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias,
//     Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps,
//     *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd)
// aten::_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias,
//     bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean,
//     Tensor(c!) save_invstd)
//
// Batch norm over dim 1 with training-mode statistics: each channel's mean and biased variance
// over every other dim (what instance_norm and BatchNorm without running stats export to).
// out = (x - mean) * invstd * weight + bias; save_mean / save_invstd get the statistics. With
// running stats and training, they are updated in place as torch does (momentum, unbiased
// variance); without training the running stats normalise (save_* may then be empty).
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/channel_walk.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

struct BatchNormArgs {
  const Tensor* input;
  const Tensor* weight;  // may be null
  const Tensor* bias;    // may be null
  Tensor* running_mean;  // null for no_stats
  Tensor* running_var;
  bool training;
  double momentum, eps;
  Tensor* out;
  Tensor* save_mean;
  Tensor* save_invstd;
};

Error check(const char* op, const BatchNormArgs& a) {
  const Tensor& input = *a.input;
  PTERON_CHECK(input.dim() >= 2, Error::InvalidArgument,
               "%s: input must have at least 2 dims, got %d", op, static_cast<int>(input.dim()));
  const int64_t C = input.size(1);
  for (const Tensor* t : {a.weight, a.bias, static_cast<const Tensor*>(a.running_mean),
                          static_cast<const Tensor*>(a.running_var)}) {
    PTERON_CHECK(t == nullptr || (t->numel() == C && is_floating(t->dtype())),
                 Error::InvalidArgument,
                 "%s: weight, bias and running stats must have %lld floating point elements", op,
                 static_cast<long long>(C));
  }
  const Tensor* inputs[] = {&input};
  PTERON_TRY(expect_float_dtypes(op, *a.out, inputs, 1));
  PTERON_TRY(expect_out_shape(op, *a.out, input.sizes().data(), input.dim()));
  for (int32_t d = 0; d < input.dim(); ++d) {
    PTERON_CHECK(input.size(d) <= 1 || input.stride(d) == a.out->stride(d), Error::NotSupported,
                 "%s: input and out must share one dim order", op);
  }
  // Training statistics fill save_*; running-stat normalisation may leave them empty.
  for (const Tensor* stat : {a.save_mean, a.save_invstd}) {
    const bool ok =
        (stat->numel() == C || (!a.training && stat->numel() == 0)) && is_floating(stat->dtype());
    PTERON_CHECK(ok, Error::InvalidArgument, "%s: save_mean/save_invstd must have %lld elements",
                 op, static_cast<long long>(C));
  }
  PTERON_CHECK(a.training || a.running_mean != nullptr, Error::InvalidArgument,
               "%s: training=False needs running stats", op);
  PTERON_CHECK(!a.training || C == 0 || input.numel() / C > 0 || input.numel() == 0,
               Error::InvalidArgument, "%s: bad input", op);
  return Error::Ok;
}

template <typename T>
void normalize_channel(const Tensor& input, Tensor& out, int64_t c, double scale, double shift) {
  using Acc = typename ComputeType<T>::type;
  const T* x = input.data<const T>();
  T* y = out.data<T>();
  const Acc s = static_cast<Acc>(scale), t = static_cast<Acc>(shift);
  for_each_channel_run(input, 1, [&](int64_t ch, int64_t off, int64_t n) {
    if (ch != c) return;
    for (int64_t i = 0; i < n; ++i) y[off + i] = store_value<T>(load_value(x[off + i]) * s + t);
  });
}

Error batch_norm(const char* op, const BatchNormArgs& a) {
  PTERON_TRY(check(op, a));
  const Tensor& input = *a.input;
  const int64_t C = input.size(1);
  const int64_t per_channel = C == 0 ? 0 : input.numel() / C;
  if (a.training) {
    PTERON_CHECK(per_channel > 0 || input.numel() == 0, Error::InvalidArgument,
                 "%s: no elements per channel", op);
  }
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.data<const T>();
    for (int64_t c = 0; c < C; ++c) {
      double mean, var;
      if (a.training) {
        // Two passes in double (mean, then squared deviations): no cancellation.
        double sum = 0;
        for_each_channel_run(input, 1, [&](int64_t ch, int64_t off, int64_t n) {
          if (ch != c) return;
          for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(load_value(x[off + i]));
        });
        mean = per_channel > 0 ? sum / static_cast<double>(per_channel) : 0.0;
        double m2 = 0;
        for_each_channel_run(input, 1, [&](int64_t ch, int64_t off, int64_t n) {
          if (ch != c) return;
          for (int64_t i = 0; i < n; ++i) {
            const double d = static_cast<double>(load_value(x[off + i])) - mean;
            m2 += d * d;
          }
        });
        var = per_channel > 0 ? m2 / static_cast<double>(per_channel) : 0.0;
        if (a.running_mean != nullptr && per_channel > 0) {
          const double unbiased =
              per_channel > 1 ? m2 / static_cast<double>(per_channel - 1) : INFINITY;
          const double rm = load_as_double(*a.running_mean, c);
          const double rv = load_as_double(*a.running_var, c);
          store_from_double(*a.running_mean, c, (1 - a.momentum) * rm + a.momentum * mean);
          store_from_double(*a.running_var, c, (1 - a.momentum) * rv + a.momentum * unbiased);
        }
      } else {
        mean = load_as_double(*a.running_mean, c);
        var = load_as_double(*a.running_var, c);
      }
      const double invstd = 1.0 / std::sqrt(var + a.eps);
      if (a.save_mean->numel() == C) store_from_double(*a.save_mean, c, mean);
      if (a.save_invstd->numel() == C) store_from_double(*a.save_invstd, c, invstd);
      const double w = a.weight != nullptr ? load_as_double(*a.weight, c) : 1.0;
      const double b = a.bias != nullptr ? load_as_double(*a.bias, c) : 0.0;
      normalize_channel<T>(input, *a.out, c, w * invstd, b - mean * w * invstd);
    }
  });
  return Error::Ok;
}

const Tensor* optional_tensor(const EValue* v) { return v->is_none() ? nullptr : v->tensor; }

Error batch_norm_legit_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_native_batch_norm_legit.out";
  const BatchNormArgs a{args[0]->tensor,
                        optional_tensor(args[1]),
                        optional_tensor(args[2]),
                        args[3]->tensor,
                        args[4]->tensor,
                        args[5]->b,
                        args[6]->d,
                        args[7]->d,
                        args[8]->tensor,
                        args[9]->tensor,
                        args[10]->tensor};
  return batch_norm(kOp, a);
}

Error batch_norm_legit_no_stats_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_native_batch_norm_legit.no_stats_out";
  PTERON_CHECK(args[3]->b, Error::InvalidArgument,
               "%s: training=False needs running stats (use the .out overload)", kOp);
  const BatchNormArgs a{args[0]->tensor,
                        optional_tensor(args[1]),
                        optional_tensor(args[2]),
                        nullptr,
                        nullptr,
                        true,
                        args[4]->d,
                        args[5]->d,
                        args[6]->tensor,
                        args[7]->tensor,
                        args[8]->tensor};
  return batch_norm(kOp, a);
}

}  // namespace

PTERON_KERNEL("aten::_native_batch_norm_legit.out", batch_norm_legit_out, "TttTTBDDTTT");
PTERON_KERNEL("aten::_native_batch_norm_legit.no_stats_out", batch_norm_legit_no_stats_out,
              "TttBDDTTT");

}  // namespace pteron
