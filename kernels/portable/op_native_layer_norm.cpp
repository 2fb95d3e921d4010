// aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight,
//     Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//     -> (Tensor(a!), Tensor(b!), Tensor(c!))
// out0 = (x - mean) * rstd * weight + bias over the trailing normalized_shape dims; out1/out2
// are the per-row mean and rstd = 1 / sqrt(var + eps), shaped input.shape[:axis] + [1] * k.
#include <cmath>

#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/moments.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::native_layer_norm.out";

template <typename T>
void layer_norm(const T* x, const T* w, const T* b, double eps, int64_t rows, int64_t D, T* y,
                T* mean_out, T* rstd_out) {
  using Acc = typename ComputeType<T>::type;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    double mean, var;
    mean_and_variance(xr, D, &mean, &var);
    const double rstd = 1.0 / std::sqrt(var + eps);
    mean_out[r] = store_value<T>(mean);
    rstd_out[r] = store_value<T>(rstd);
    const Acc m = static_cast<Acc>(mean), s = static_cast<Acc>(rstd);
    if (w != nullptr && b != nullptr) {
      for (int64_t i = 0; i < D; ++i)
        yr[i] = store_value<T>((load_value(xr[i]) - m) * s * load_value(w[i]) + load_value(b[i]));
    } else if (w != nullptr) {
      for (int64_t i = 0; i < D; ++i)
        yr[i] = store_value<T>((load_value(xr[i]) - m) * s * load_value(w[i]));
    } else if (b != nullptr) {
      for (int64_t i = 0; i < D; ++i)
        yr[i] = store_value<T>((load_value(xr[i]) - m) * s + load_value(b[i]));
    } else {
      for (int64_t i = 0; i < D; ++i) yr[i] = store_value<T>((load_value(xr[i]) - m) * s);
    }
  }
}

Error native_layer_norm_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Span<const int64_t> shape = args[1]->int_list;
  const Tensor* weight = args[2]->is_none() ? nullptr : args[2]->tensor;
  const Tensor* bias = args[3]->is_none() ? nullptr : args[3]->tensor;
  const double eps = args[4]->scalar_as_double();
  Tensor& out = *args[5]->tensor;
  Tensor& mean_out = *args[6]->tensor;
  Tensor& rstd_out = *args[7]->tensor;
  const int32_t k = static_cast<int32_t>(shape.size());
  if (k < 1 || k > input.dim()) {
    return fail(Error::InvalidArgument, "%s: normalized_shape has %d dims, input has %d", kOp, k,
                input.dim());
  }
  const int32_t axis = input.dim() - k;
  int64_t D = 1;
  for (int32_t i = 0; i < k; ++i) {
    if (shape[i] != input.size(axis + i)) {
      return fail(Error::InvalidArgument,
                  "%s: normalized_shape[%d] = %lld does not match input dim %d of size %d", kOp, i,
                  static_cast<long long>(shape[i]), axis + i, input.size(axis + i));
    }
    D *= shape[i];
  }
  const Tensor* inputs[] = {&input, &mean_out, &rstd_out};
  PTERON_TRY(expect_float_dtypes(kOp, out, inputs, 3));
  for (const Tensor* p : {weight, bias}) {
    if (p == nullptr) continue;
    if (p->numel() != D || p->dtype() != input.dtype()) {
      return fail(Error::InvalidArgument, "%s: weight and bias must have %lld %s elements", kOp,
                  static_cast<long long>(D), scalar_type_name(input.dtype()));
    }
  }
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  int32_t stat_sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) stat_sizes[d] = d < axis ? input.size(d) : 1;
  PTERON_TRY(expect_out_shape(kOp, mean_out, stat_sizes, input.dim()));
  PTERON_TRY(expect_out_shape(kOp, rstd_out, stat_sizes, input.dim()));
  if (!is_row_major(input) || !is_row_major(out) || !is_row_major(mean_out) ||
      !is_row_major(rstd_out)) {
    return fail(Error::NotSupported, "%s: only the default dim order is supported", kOp);
  }
  const int64_t rows = D == 0 ? mean_out.numel() : input.numel() / D;
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    layer_norm<T>(input.data<const T>(), weight ? weight->data<const T>() : nullptr,
                  bias ? bias->data<const T>() : nullptr, eps, rows, D, out.data<T>(),
                  mean_out.data<T>(), rstd_out.data<T>());
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::native_layer_norm.out", native_layer_norm_out, "TLttDTTT");

}  // namespace pteron
