// cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min,
//     int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// float32 -> int8 as quantized_decomposed does it: clamp(round(x * (1/scale)) + zp, qmin,
// qmax), with the product in float32 and round half to even. NaN quantises to the zero point.
#include <cmath>

#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantize_per_tensor.out";

void quantize_scalar(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp,
                     int32_t qmin, int32_t qmax) {
  for (int64_t i = 0; i < n; ++i) {
    const float r = std::nearbyint(in[i] * inv_scale);  // default rounding: half to even
    // Out-of-range values saturate before the int conversion, which would be undefined.
    const float lo = static_cast<float>(qmin - zp), hi = static_cast<float>(qmax - zp);
    const float c = r < lo ? lo : r > hi ? hi : (r == r ? r : 0.0f);
    out[i] = static_cast<int8_t>(static_cast<int32_t>(c) + zp);
  }
}

#if PTERON_CORTEX_M_MVE
void quantize_mve(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp,
                  int32_t qmin, int32_t qmax) {
  const float32x4_t lo = vdupq_n_f32(static_cast<float>(qmin - zp));
  const float32x4_t hi = vdupq_n_f32(static_cast<float>(qmax - zp));
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
    float32x4_t x = vmulq_n_f32(vldrwq_z_f32(in + i, p), inv_scale);
    x = vrndnq_f32(x);  // half to even, as nearbyint
    // NaN compares false both ways; vcmp-based selects keep it out of the integer conversion.
    x = vpselq_f32(lo, x, vcmpltq_f32(x, lo));
    x = vpselq_f32(hi, x, vcmpgtq_f32(x, hi));
    x = vpselq_f32(x, vdupq_n_f32(0.0f), vcmpeqq_f32(x, x));
    const int32x4_t q = vaddq_n_s32(vcvtq_s32_f32(x), zp);
    vstrbq_p_s32(out + i, q, p);
  }
}
#endif

Error quantize_per_tensor_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  const double scale = args[1]->d;
  const int64_t zp = args[2]->i, qmin = args[3]->i, qmax = args[4]->i;
  PTERON_TRY(check_dtype(kOp, in, ScalarType::Float, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  if (args[5]->i != static_cast<int64_t>(ScalarType::Char)) {
    return fail(Error::NotSupported, "%s: only dtype int8 is supported", kOp);
  }
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  if (!(scale > 0) || !std::isfinite(1.0 / scale)) {
    return fail(Error::InvalidArgument, "%s: scale %g must be positive and finite", kOp, scale);
  }
  PTERON_TRY(check_zero_point(kOp, zp, "zero_point"));
  PTERON_TRY(check_activation(kOp, qmin, qmax));
  const float inv_scale = static_cast<float>(1.0 / scale);
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    quantize_mve(in.data<float>(), out.data<int8_t>(), in.numel(), inv_scale, zp, qmin, qmax);
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::quantize(in.data<float>(), out.data<int8_t>(), in.numel(), inv_scale, zp, qmin, qmax))
    return Error::Ok;
#endif
  quantize_scalar(in.data<float>(), out.data<int8_t>(), in.numel(), inv_scale, zp, qmin, qmax);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantize_per_tensor.out", quantize_per_tensor_out, "TDIIIIT");

}  // namespace pteron::cortex_m
