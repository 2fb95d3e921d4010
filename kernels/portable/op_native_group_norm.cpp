// aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C,
//     SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     -> (Tensor(a!), Tensor(b!), Tensor(c!))
// Normalises each (image, group of C / group channels) block; weight/bias are per channel.
// out1/out2 are the (N, group) means and rstd = 1 / sqrt(var + eps).
#include <cmath>

#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/moments.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::native_group_norm.out";

template <typename T>
void group_norm(const T* x, const T* w, const T* b, double eps, int64_t N, int64_t C, int64_t HxW,
                int64_t G, T* y, T* mean_out, T* rstd_out) {
  using Acc = typename ComputeType<T>::type;
  const int64_t cg = C / G;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < G; ++g) {
      const int64_t base = (n * C + g * cg) * HxW;
      double mean, var;
      mean_and_variance(x + base, cg * HxW, &mean, &var);
      const double rstd = 1.0 / std::sqrt(var + eps);
      mean_out[n * G + g] = store_value<T>(mean);
      rstd_out[n * G + g] = store_value<T>(rstd);
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t ch = g * cg + c;
        const Acc wv = w != nullptr ? load_value(w[ch]) : Acc(1);
        const Acc bv = b != nullptr ? load_value(b[ch]) : Acc(0);
        // (x - mean) * scale + b: folding mean into the bias cancels badly when var ~ 0.
        const Acc scale = static_cast<Acc>(rstd) * wv;
        const Acc m = static_cast<Acc>(mean);
        const T* xc = x + base + c * HxW;
        T* yc = y + base + c * HxW;
        for (int64_t i = 0; i < HxW; ++i)
          yc[i] = store_value<T>((load_value(xc[i]) - m) * scale + bv);
      }
    }
  }
}

Error native_group_norm_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor* weight = args[1]->is_none() ? nullptr : args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  const int64_t N = args[3]->i, C = args[4]->i, HxW = args[5]->i, G = args[6]->i;
  const double eps = args[7]->scalar_as_double();
  Tensor& out = *args[8]->tensor;
  Tensor& mean_out = *args[9]->tensor;
  Tensor& rstd_out = *args[10]->tensor;
  if (input.dim() < 2 || input.size(0) != N || input.size(1) != C || N < 0 || C < 0 || HxW < 0 ||
      input.numel() != N * C * HxW) {
    return fail(Error::InvalidArgument,
                "%s: input does not have shape (N=%lld, C=%lld, *) with "
                "HxW=%lld",
                kOp, static_cast<long long>(N), static_cast<long long>(C),
                static_cast<long long>(HxW));
  }
  if (G <= 0 || C % G != 0) {
    return fail(Error::InvalidArgument, "%s: %lld channels not divisible into %lld groups", kOp,
                static_cast<long long>(C), static_cast<long long>(G));
  }
  const Tensor* inputs[] = {&input, &mean_out, &rstd_out};
  PTERON_TRY(expect_float_dtypes(kOp, out, inputs, 3));
  for (const Tensor* p : {weight, bias}) {
    if (p != nullptr && (p->numel() != C || p->dtype() != input.dtype())) {
      return fail(Error::InvalidArgument, "%s: weight and bias must have %lld %s elements", kOp,
                  static_cast<long long>(C), scalar_type_name(input.dtype()));
    }
  }
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  const int32_t stat_sizes[] = {static_cast<int32_t>(N), static_cast<int32_t>(G)};
  PTERON_TRY(expect_out_shape(kOp, mean_out, stat_sizes, 2));
  PTERON_TRY(expect_out_shape(kOp, rstd_out, stat_sizes, 2));
  if (!is_row_major(input) || !is_row_major(out) || !is_row_major(mean_out) ||
      !is_row_major(rstd_out)) {
    return fail(Error::NotSupported, "%s: only the default dim order is supported", kOp);
  }
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    group_norm<T>(input.data<const T>(), weight ? weight->data<const T>() : nullptr,
                  bias ? bias->data<const T>() : nullptr, eps, N, C, HxW, G, out.data<T>(),
                  mean_out.data<T>(), rstd_out.data<T>());
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::native_group_norm.out", native_group_norm_out, "TttIIIIDTTT");

}  // namespace pteron
