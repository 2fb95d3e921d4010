// quantized_decomposed::dequantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     ScalarType? out_dtype=None, Tensor(a!) out)
//
// out[..c..] = (input - zero_points[c]) * scales[c] (input * scales[c] without zero points),
// in the scales' precision, stored as float32. quant_min/quant_max are metadata.
#include "kernels/portable/util/channel_walk.h"
#include "kernels/portable/util/quantize.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename C, typename Q>
void dequantize_channels(const Tensor& in, const Tensor& scales, const Tensor* zps, int32_t axis,
                         Tensor& out) {
  const Q* q = in.data<Q>();
  float* x = out.data<float>();
  for_each_channel_run(in, axis, [&](int64_t c, int64_t offset, int64_t n) {
    const C s = channel_param<C>(scales, c);
    // torch subtracts in the zero points' type (int64 for PT2E), then multiplies by the scale.
    const int64_t zp = zps ? channel_param<int64_t>(*zps, c) : 0;
    for (int64_t i = offset; i < offset + n; ++i) {
      x[i] = static_cast<float>(static_cast<C>(static_cast<int64_t>(q[i]) - zp) * s);
    }
  });
}

Error dequantize_per_channel_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::dequantize_per_channel.out";
  const Tensor& in = *args[0]->tensor;
  const Tensor& scales = *args[1]->tensor;
  const Tensor* zps = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[8]->tensor;
  if (static_cast<int64_t>(in.dtype()) != args[6]->i) {
    return fail(Error::InvalidArgument, "%s: input is %s but dtype says %s", kOp,
                scalar_type_name(in.dtype()),
                scalar_type_name(static_cast<ScalarType>(args[6]->i)));
  }
  if ((!args[7]->is_none() && args[7]->i != static_cast<int64_t>(ScalarType::Float)) ||
      out.dtype() != ScalarType::Float) {
    return fail(Error::NotSupported, "%s: only float32 outputs are supported, out is %s", kOp,
                scalar_type_name(out.dtype()));
  }
  if (zps && is_floating(zps->dtype())) {
    return fail(Error::NotSupported, "%s: floating zero points are not supported", kOp);
  }
  int64_t axis = args[3]->i;
  if (axis < 0) axis += in.dim();
  if (axis < 0 || axis >= in.dim()) {
    return fail(Error::InvalidArgument, "%s: axis %lld out of range for a %d-D input", kOp,
                static_cast<long long>(args[3]->i), in.dim());
  }
  const int32_t ax = static_cast<int32_t>(axis);
  PTERON_TRY(check_channel_params(kOp, in, ax, scales, zps));
  PTERON_TRY(check_same_layout(kOp, in, out));
  return dispatch_quantized_dtype(kOp, in.dtype(), [&](auto q) {
    using Q = decltype(q);
    if (scales.dtype() == ScalarType::Double) {
      dequantize_channels<double, Q>(in, scales, zps, ax, out);
    } else {
      dequantize_channels<float, Q>(in, scales, zps, ax, out);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("quantized_decomposed::dequantize_per_channel.out", dequantize_per_channel_out,
              "TTtIIIIiT");

}  // namespace pteron
