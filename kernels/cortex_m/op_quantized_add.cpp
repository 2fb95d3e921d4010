// cortex_m::quantized_add.out(Tensor self, int self_zero_point, int self_multiplier,
//     int self_shift, Tensor other, int other_zero_point, int other_multiplier, int other_shift,
//     int output_zero_point, int output_multiplier, int output_shift, int activation_min,
//     int activation_max, *, Tensor(a!) out)
//
// CMSIS-NN arm_elementwise_add_s8: each input (q - zp) << 20 is requantised to a common scale,
// the sum is requantised to the output scale, offset and clamped. Both inputs have out's shape.
#include "kernels/cortex_m/util/add_params.h"
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_add.out";
void add_scalar(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = requantize((a[i] - p.zp1) * (1 << kAddLeftShift), p.mult1, p.shift1);
    const int32_t y = requantize((b[i] - p.zp2) * (1 << kAddLeftShift), p.mult2, p.shift2);
    const int32_t r = requantize(x + y, p.out_mult, p.out_shift) + p.out_zp;
    out[i] = static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
  }
}

#if PTERON_CORTEX_M_MVE
void add_mve(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(n - i));
    int32x4_t x = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(a + i, pred), p.zp1), kAddLeftShift);
    int32x4_t y = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(b + i, pred), p.zp2), kAddLeftShift);
    x = requantize_mve(x, p.mult1, p.shift1);
    y = requantize_mve(y, p.mult2, p.shift2);
    int32x4_t r = vaddq_n_s32(requantize_mve(vaddq_s32(x, y), p.out_mult, p.out_shift), p.out_zp);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(p.act_min)), vdupq_n_s32(p.act_max));
    vstrbq_p_s32(out + i, r, pred);
  }
}
#endif

Error quantized_add_out(KernelContext&, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[4]->tensor;
  Tensor& out = *args[13]->tensor;
  PTERON_TRY(check_binary_int8(kOp, a, b, out, args[1]->i, args[5]->i, args[8]->i));
  PTERON_TRY(check_requant(kOp, args[2]->i, args[3]->i, "self"));
  PTERON_TRY(check_requant(kOp, args[6]->i, args[7]->i, "other"));
  PTERON_TRY(check_requant(kOp, args[9]->i, args[10]->i, "output"));
  PTERON_TRY(check_activation(kOp, args[11]->i, args[12]->i));
  AddParams p;
  p.zp1 = args[1]->i, p.mult1 = args[2]->i, p.shift1 = args[3]->i;
  p.zp2 = args[5]->i, p.mult2 = args[6]->i, p.shift2 = args[7]->i;
  p.out_zp = args[8]->i, p.out_mult = args[9]->i, p.out_shift = args[10]->i;
  p.act_min = args[11]->i, p.act_max = args[12]->i;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    add_mve(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p);
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::add(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p))
    return Error::Ok;
#endif
  add_scalar(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), out.numel(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_add.out", quantized_add_out, "TIIITIIIIIIIIT");

}  // namespace pteron::cortex_m
