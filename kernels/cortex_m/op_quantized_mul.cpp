// cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other,
//     int other_zero_point, int output_zero_point, int output_multiplier, int output_shift, *,
//     Tensor(a!) out)
//
// CMSIS-NN arm_elementwise_mul_s8: (a - zp_a) * (b - zp_b) requantised to the output scale,
// offset and clamped to int8. Both inputs have out's shape.
#include "kernels/cortex_m/util/add_params.h"
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_mul.out";

void mul_scalar(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prod = (a[i] - p.zp1) * (b[i] - p.zp2);
    const int32_t r = requantize(prod, p.out_mult, p.out_shift) + p.out_zp;
    out[i] = static_cast<int8_t>(clamp_i32(r, kInt8Min, kInt8Max));
  }
}

#if PTERON_CORTEX_M_MVE
void mul_mve(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(n - i));
    const int32x4_t x = vsubq_n_s32(vldrbq_z_s32(a + i, pred), p.zp1);
    const int32x4_t y = vsubq_n_s32(vldrbq_z_s32(b + i, pred), p.zp2);
    int32x4_t r = vaddq_n_s32(requantize_mve(vmulq_s32(x, y), p.out_mult, p.out_shift), p.out_zp);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(kInt8Min)), vdupq_n_s32(kInt8Max));
    vstrbq_p_s32(out + i, r, pred);
  }
}
#endif

Error quantized_mul_out(KernelContext&, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[2]->tensor;
  Tensor& out = *args[7]->tensor;
  PTERON_TRY(check_binary_int8(kOp, a, b, out, args[1]->i, args[3]->i, args[4]->i));
  PTERON_TRY(check_requant(kOp, args[5]->i, args[6]->i, "output"));
  const MulParams p{static_cast<int32_t>(args[1]->i), static_cast<int32_t>(args[3]->i),
                    static_cast<int32_t>(args[4]->i), static_cast<int32_t>(args[5]->i),
                    static_cast<int32_t>(args[6]->i)};
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    mul_mve(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p);
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::mul(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p))
    return Error::Ok;
#endif
  mul_scalar(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_mul.out", quantized_mul_out, "TITIIIIT");

}  // namespace pteron::cortex_m
