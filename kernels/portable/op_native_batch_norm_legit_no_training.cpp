// aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias,
//     Tensor running_mean, Tensor running_var, float momentum, float eps, *, Tensor(a!) out0,
//     Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
// out0 = (x - running_mean) / sqrt(running_var + eps) * weight + bias per channel (dim 1).
// torch returns empty out1/out2 here; when the caller passes them with one element per
// channel they receive running_mean and the inverse std.
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_native_batch_norm_legit_no_training.out";
constexpr int64_t kChunk = 256;  // channels whose scale/shift are kept on the stack at once

struct ChannelParams {
  const Tensor* weight;
  const Tensor* bias;
  const Tensor* mean;
  const Tensor* var;
  double eps;
  // y = x * scale + shift for channel c.
  void get(int64_t c, double* scale, double* shift) const {
    const double invstd = 1.0 / std::sqrt(load_as_double(*var, c) + eps);
    const double w = weight != nullptr ? load_as_double(*weight, c) : 1.0;
    const double b = bias != nullptr ? load_as_double(*bias, c) : 0.0;
    *scale = w * invstd;
    *shift = b - load_as_double(*mean, c) * w * invstd;
  }
};

// Memory is outer x C x inner (inner = the channel stride), for any dense layout.
template <typename T>
void batch_norm(const T* x, T* y, int64_t outer, int64_t C, int64_t inner, const ChannelParams& p) {
  using Acc = typename ComputeType<T>::type;
  Acc scale[kChunk], shift[kChunk];
  for (int64_t c0 = 0; c0 < C; c0 += kChunk) {
    const int64_t cn = C - c0 < kChunk ? C - c0 : kChunk;
    for (int64_t c = 0; c < cn; ++c) {
      double s, t;
      p.get(c0 + c, &s, &t);
      scale[c] = static_cast<Acc>(s);
      shift[c] = static_cast<Acc>(t);
    }
    for (int64_t o = 0; o < outer; ++o) {
      const T* xo = x + (o * C + c0) * inner;
      T* yo = y + (o * C + c0) * inner;
      if (inner == 1) {  // channels innermost (channels-last, or 2-D input)
        for (int64_t c = 0; c < cn; ++c)
          yo[c] = store_value<T>(load_value(xo[c]) * scale[c] + shift[c]);
        continue;
      }
      for (int64_t c = 0; c < cn; ++c) {
        const Acc s = scale[c], t = shift[c];
        const T* xc = xo + c * inner;
        T* yc = yo + c * inner;
        for (int64_t i = 0; i < inner; ++i) yc[i] = store_value<T>(load_value(xc[i]) * s + t);
      }
    }
  }
}

Error batch_norm_no_training_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  ChannelParams p{args[1]->is_none() ? nullptr : args[1]->tensor,
                  args[2]->is_none() ? nullptr : args[2]->tensor, args[3]->tensor, args[4]->tensor,
                  args[6]->scalar_as_double()};
  Tensor& out = *args[7]->tensor;
  Tensor& mean_out = *args[8]->tensor;
  Tensor& invstd_out = *args[9]->tensor;
  if (input.dim() < 2) {
    return fail(Error::InvalidArgument, "%s: input must have at least 2 dims, got %d", kOp,
                input.dim());
  }
  const int64_t C = input.size(1);
  for (const Tensor* t : {p.weight, p.bias, p.mean, p.var}) {
    if (t != nullptr && (t->numel() != C || !is_floating(t->dtype()))) {
      return fail(Error::InvalidArgument,
                  "%s: weight, bias, running_mean and running_var must have %lld floating "
                  "point elements",
                  kOp, static_cast<long long>(C));
    }
  }
  const Tensor* inputs[] = {&input};
  PTERON_TRY(expect_float_dtypes(kOp, out, inputs, 1));
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  for (int32_t d = 0; d < input.dim(); ++d) {
    if (input.size(d) > 1 && input.stride(d) != out.stride(d)) {
      return fail(Error::NotSupported, "%s: input and out must share one dim order", kOp);
    }
  }
  for (Tensor* stat : {&mean_out, &invstd_out}) {
    if (stat->numel() != 0 && (stat->numel() != C || !is_floating(stat->dtype()))) {
      return fail(Error::InvalidArgument, "%s: out1/out2 must be empty or have %lld elements", kOp,
                  static_cast<long long>(C));
    }
  }
  for (int64_t c = 0; c < mean_out.numel(); ++c)
    store_from_double(mean_out, c, load_as_double(*p.mean, c));
  for (int64_t c = 0; c < invstd_out.numel(); ++c)
    store_from_double(invstd_out, c, 1.0 / std::sqrt(load_as_double(*p.var, c) + p.eps));
  if (input.numel() == 0) return Error::Ok;
  // One channel: every element shares scale and shift, whatever the layout.
  const int64_t inner = C == 1 ? input.numel() : input.stride(1);
  const int64_t outer = input.numel() / (C * inner);
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    batch_norm<T>(input.data<const T>(), out.data<T>(), outer, C, inner, p);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_native_batch_norm_legit_no_training.out", batch_norm_no_training_out,
              "TttTTDDTTT");

}  // namespace pteron
