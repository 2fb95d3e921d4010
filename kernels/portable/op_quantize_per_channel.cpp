// quantized_decomposed::quantize_per_channel.out(Tensor input, Tensor scales,
//     Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
//     Tensor(a!) out)
//
// out[..c..] = clamp(round(input * (1 / scales[c])) + zero_points[c], quant_min, quant_max),
// in the scales' precision (float32 scales: float32 math; float64 scales: float64, as torch
// promotes). Input float32; scales float32/float64, zero points int32/int64/float.
#include "kernels/portable/util/channel_walk.h"
#include "kernels/portable/util/quantize.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename C, typename Q>
void quantize_channels(const Tensor& in, const Tensor& scales, const Tensor& zps, int32_t axis,
                       C qmin, C qmax, Tensor& out) {
  const float* x = in.data<float>();
  Q* q = out.data<Q>();
  for_each_channel_run(in, axis, [&](int64_t c, int64_t offset, int64_t n) {
    const C inv = C(1) / channel_param<C>(scales, c);
    const C zp = channel_param<C>(zps, c);
    for (int64_t i = offset; i < offset + n; ++i) {
      C v = std::nearbyint(static_cast<C>(x[i]) * inv) + zp;
      v = v > qmin ? v : qmin;  // NaN becomes qmin
      v = v < qmax ? v : qmax;
      const double d = v;  // float(INT32_MAX) is 2^31: saturate after widening
      q[i] = d >= 2147483647.0 ? static_cast<Q>(2147483647) : static_cast<Q>(d);
    }
  });
}

Error quantize_per_channel_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "quantized_decomposed::quantize_per_channel.out";
  const Tensor& in = *args[0]->tensor;
  const Tensor& scales = *args[1]->tensor;
  const Tensor& zps = *args[2]->tensor;
  const int64_t qmin = args[4]->i, qmax = args[5]->i;
  Tensor& out = *args[7]->tensor;
  if (in.dtype() != ScalarType::Float) {
    return fail(Error::InvalidArgument, "%s: input must be float32, got %s", kOp,
                scalar_type_name(in.dtype()));
  }
  if (static_cast<int64_t>(out.dtype()) != args[6]->i) {
    return fail(Error::InvalidArgument, "%s: out is %s but dtype asks for %s", kOp,
                scalar_type_name(out.dtype()),
                scalar_type_name(static_cast<ScalarType>(args[6]->i)));
  }
  int64_t axis = args[3]->i;
  if (axis < 0) axis += in.dim();
  if (axis < 0 || axis >= in.dim()) {
    return fail(Error::InvalidArgument, "%s: axis %lld out of range for a %d-D input", kOp,
                static_cast<long long>(args[3]->i), in.dim());
  }
  const int32_t ax = static_cast<int32_t>(axis);
  PTERON_TRY(check_channel_params(kOp, in, ax, scales, &zps));
  PTERON_TRY(check_quant_range(kOp, qmin, qmax, out.dtype()));
  PTERON_TRY(check_same_layout(kOp, in, out));
  return dispatch_quantized_dtype(kOp, out.dtype(), [&](auto q) {
    using Q = decltype(q);
    if (scales.dtype() == ScalarType::Double) {
      quantize_channels<double, Q>(in, scales, zps, ax, static_cast<double>(qmin),
                                   static_cast<double>(qmax), out);
    } else {
      quantize_channels<float, Q>(in, scales, zps, ax, static_cast<float>(qmin),
                                  static_cast<float>(qmax), out);
    }
    return Error::Ok;
  });
}

}  // namespace

PTERON_KERNEL("quantized_decomposed::quantize_per_channel.out", quantize_per_channel_out,
              "TTTIIIIT");

}  // namespace pteron
