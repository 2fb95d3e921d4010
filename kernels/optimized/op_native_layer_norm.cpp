// aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight,
//     Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
// Optimized for float32 in the default dim order: rows normalised with SIMD, split over threads.
// Everything else (and every shape error) goes through the portable kernel.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::native_layer_norm.out";

bool is_plain_float(const Tensor* t) {
  return t == nullptr || (t->dtype() == ScalarType::Float && is_row_major(*t));
}

Error native_layer_norm_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Span<const int64_t> shape = args[1]->int_list;
  const Tensor* weight = args[2]->is_none() ? nullptr : args[2]->tensor;
  const Tensor* bias = args[3]->is_none() ? nullptr : args[3]->tensor;
  Tensor& out = *args[5]->tensor;
  Tensor& mean_out = *args[6]->tensor;
  Tensor& rstd_out = *args[7]->tensor;
  const int32_t k = static_cast<int32_t>(shape.size());
  bool fast = k >= 1 && k <= input.dim();
  int64_t D = 1;
  for (int32_t i = 0; fast && i < k; ++i) {
    fast = shape[i] == input.size(input.dim() - k + i);
    D *= shape[i];
  }
  fast = fast && D > 0 && is_plain_float(&input) && is_plain_float(&out) &&
         is_plain_float(&mean_out) && is_plain_float(&rstd_out) && is_plain_float(weight) &&
         is_plain_float(bias) && (weight == nullptr || weight->numel() == D) &&
         (bias == nullptr || bias->numel() == D);
  if (!fast) return optimized::call_portable(kOp, ctx, args);
  const int32_t axis = input.dim() - k;
  int32_t stat_sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) stat_sizes[d] = d < axis ? input.size(d) : 1;
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  PTERON_TRY(expect_out_shape(kOp, mean_out, stat_sizes, input.dim()));
  PTERON_TRY(expect_out_shape(kOp, rstd_out, stat_sizes, input.dim()));
  const float eps = static_cast<float>(args[4]->scalar_as_double());
  const float* x = input.data<const float>();
  const float* w = weight ? weight->data<const float>() : nullptr;
  const float* b = bias ? bias->data<const float>() : nullptr;
  float* y = out.data<float>();
  float* mean = mean_out.data<float>();
  float* rstd = rstd_out.data<float>();
  const IsaKernels& isa = isa_kernels();
  parallel_for(input.numel() / D, D * 4, [&](int64_t begin, int64_t end) {
    isa.layer_norm(x + begin * D, w, b, eps, end - begin, D, y + begin * D, mean + begin,
                   rstd + begin);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::native_layer_norm.out", native_layer_norm_out, "TLttDTTT");

}  // namespace pteron::opt
