// quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
//     int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None,
//     Tensor(a!) out)
// quantized_decomposed::dequantize_per_tensor.Tensor_out(Tensor input, Tensor scale,
//     Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *,
//     ScalarType? out_dtype=None, Tensor(a!) out)
//
// out = (float(input) - zero_point) * scale in float32, as torch. quant_min/quant_max are
// metadata (not applied); input must have `dtype`; out_dtype must be None or float32.
#include "kernels/portable/util/quantize.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error dequantize(const char* op, const Tensor& in, double scale, double zero_point, int64_t dtype,
                 const EValue& out_dtype, Tensor& out) {
  if (static_cast<int64_t>(in.dtype()) != dtype) {
    return fail(Error::InvalidArgument, "%s: input is %s but dtype says %s", op,
                scalar_type_name(in.dtype()), scalar_type_name(static_cast<ScalarType>(dtype)));
  }
  if ((!out_dtype.is_none() && out_dtype.i != static_cast<int64_t>(ScalarType::Float)) ||
      out.dtype() != ScalarType::Float) {
    return fail(Error::NotSupported, "%s: only float32 outputs are supported, out is %s", op,
                scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_same_layout(op, in, out));
  const float s = static_cast<float>(scale), zp = static_cast<float>(zero_point);
  return dispatch_quantized_dtype(op, in.dtype(), [&](auto q) {
    using Q = decltype(q);
    dequantize_row(in.data<Q>(), out.data<float>(), in.numel(), s, zp);
    return Error::Ok;
  });
}

Error dequantize_per_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::dequantize_per_tensor.out";
  return dequantize(kOp, *args[0]->tensor, args[1]->scalar_as_double(),
                    static_cast<double>(args[2]->i), args[5]->i, *args[6], *args[7]->tensor);
}

Error dequantize_per_tensor_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::dequantize_per_tensor.Tensor_out";
  double scale = 0, zero_point = 0;
  PTERON_TRY(read_single(kOp, "scale", *args[1]->tensor, &scale));
  PTERON_TRY(read_single(kOp, "zero_point", *args[2]->tensor, &zero_point));
  return dequantize(kOp, *args[0]->tensor, scale, zero_point, args[5]->i, *args[6],
                    *args[7]->tensor);
}

}  // namespace

PTERON_KERNEL("quantized_decomposed::dequantize_per_tensor.out", dequantize_per_tensor_out,
              "TDIIIIiT");
PTERON_KERNEL("quantized_decomposed::dequantize_per_tensor.Tensor_out",
              dequantize_per_tensor_tensor_out, "TTTIIIiT");

}  // namespace pteron
