// cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min,
//     int quant_max, ScalarType dtype, *, Tensor(a!) out)
//
// int8 -> float32: (q - zp) * scale, in float32 as quantized_decomposed computes it.
#include <cmath>

#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::dequantize_per_tensor.out";

void dequantize_scalar(const int8_t* in, float* out, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i] - zp) * scale;
}

#if PTERON_CORTEX_M_MVE
void dequantize_mve(const int8_t* in, float* out, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
    const int32x4_t q = vsubq_n_s32(vldrbq_z_s32(in + i, p), zp);
    vstrwq_p_f32(out + i, vmulq_n_f32(vcvtq_f32_s32(q), scale), p);
  }
}
#endif

Error dequantize_per_tensor_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  const double scale = args[1]->d;
  const int64_t zp = args[2]->i;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_dtype(kOp, out, ScalarType::Float, "out"));
  if (args[5]->i != static_cast<int64_t>(ScalarType::Char)) {
    return fail(Error::NotSupported, "%s: only dtype int8 is supported", kOp);
  }
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  if (!(scale > 0) || !std::isfinite(scale)) {
    return fail(Error::InvalidArgument, "%s: scale %g must be positive and finite", kOp, scale);
  }
  PTERON_TRY(check_zero_point(kOp, zp, "zero_point"));
  const float s = static_cast<float>(scale);
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    dequantize_mve(in.data<int8_t>(), out.data<float>(), in.numel(), s, zp);
    return Error::Ok;
  }
#endif
  dequantize_scalar(in.data<int8_t>(), out.data<float>(), in.numel(), s, zp);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::dequantize_per_tensor.out", dequantize_per_tensor_out, "TDIIIIT");

}  // namespace pteron::cortex_m
