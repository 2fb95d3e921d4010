// quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
// quantized_decomposed::quantize_per_tensor.Tensor_out(Tensor input, Tensor scale,
//     Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// out = clamp(round(input * (1 / scale)) + zero_point, quant_min, quant_max) as `dtype`, the
// float32 arithmetic of torch.ao.quantization.fx._decomposed. Input float32 (torch also takes
// half/bfloat16 by converting to float32 first; PT2E graphs quantize float32 activations).
#include "kernels/portable/util/quantize.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error quantize(const char* op, const Tensor& in, double scale, double zero_point, int64_t qmin,
               int64_t qmax, int64_t dtype, Tensor& out) {
  if (in.dtype() != ScalarType::Float) {
    return fail(Error::InvalidArgument, "%s: input must be float32, got %s", op,
                scalar_type_name(in.dtype()));
  }
  if (static_cast<int64_t>(out.dtype()) != dtype) {
    return fail(Error::InvalidArgument, "%s: out is %s but dtype asks for %s", op,
                scalar_type_name(out.dtype()), scalar_type_name(static_cast<ScalarType>(dtype)));
  }
  if (!(scale > 0) || !std::isfinite(scale)) {
    return fail(Error::InvalidArgument, "%s: scale must be positive and finite, got %g", op, scale);
  }
  PTERON_TRY(check_quant_range(op, qmin, qmax, out.dtype()));
  PTERON_TRY(check_same_layout(op, in, out));
  const float inv_scale = static_cast<float>(1.0 / scale);
  return dispatch_quantized_dtype(op, out.dtype(), [&](auto q) {
    using Q = decltype(q);
    quantize_row(in.data<float>(), out.data<Q>(), in.numel(), inv_scale,
                 static_cast<float>(zero_point), static_cast<float>(qmin),
                 static_cast<float>(qmax));
    return Error::Ok;
  });
}

Error quantize_per_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::quantize_per_tensor.out";
  return quantize(kOp, *args[0]->tensor, args[1]->scalar_as_double(),
                  static_cast<double>(args[2]->i), args[3]->i, args[4]->i, args[5]->i,
                  *args[6]->tensor);
}

Error quantize_per_tensor_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::quantize_per_tensor.Tensor_out";
  double scale = 0, zero_point = 0;
  PTERON_TRY(read_single(kOp, "scale", *args[1]->tensor, &scale));
  PTERON_TRY(read_single(kOp, "zero_point", *args[2]->tensor, &zero_point));
  return quantize(kOp, *args[0]->tensor, scale, zero_point, args[3]->i, args[4]->i, args[5]->i,
                  *args[6]->tensor);
}

}  // namespace

PTERON_KERNEL("quantized_decomposed::quantize_per_tensor.out", quantize_per_tensor_out, "TDIIIIT");
PTERON_KERNEL("quantized_decomposed::quantize_per_tensor.Tensor_out",
              quantize_per_tensor_tensor_out, "TTTIIIT");

}  // namespace pteron
