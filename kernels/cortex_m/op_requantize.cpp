// cortex_m::requantize.out(Tensor input, int input_zero_point, int output_zero_point,
//     int multiplier, int shift, int activation_min, int activation_max, *, Tensor(a!) out)
//
// int8 -> int8 with other quantisation parameters: clamp(requantize(q - zp_in, multiplier,
// shift) + zp_out, activation_min, activation_max), multiplier/shift being scale_in / scale_out.
// pteron's own op (ExecuTorch's Cortex-M backend has none): it replaces dequantize -> quantize
// pairs with different parameters and follows average pools whose output has its own scale.
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::requantize.out";

struct RequantParams {
  int32_t zp_in, zp_out, mult, shift, act_min, act_max;
};

void requantize_scalar(const int8_t* in, int8_t* out, int64_t n, const RequantParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t r = requantize(in[i] - p.zp_in, p.mult, p.shift) + p.zp_out;
    out[i] = static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
  }
}

#if PTERON_CORTEX_M_MVE
void requantize_mve_path(const int8_t* in, int8_t* out, int64_t n, const RequantParams& p) {
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(n - i));
    const int32x4_t x = vsubq_n_s32(vldrbq_z_s32(in + i, pr), p.zp_in);
    int32x4_t r = vaddq_n_s32(requantize_mve(x, p.mult, p.shift), p.zp_out);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(p.act_min)), vdupq_n_s32(p.act_max));
    vstrbq_p_s32(out + i, r, pr);
  }
}
#endif

Error requantize_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[7]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  PTERON_TRY(check_zero_point(kOp, args[1]->i, "input_zero_point"));
  PTERON_TRY(check_zero_point(kOp, args[2]->i, "output_zero_point"));
  PTERON_TRY(check_requant(kOp, args[3]->i, args[4]->i, "output"));
  PTERON_TRY(check_activation(kOp, args[5]->i, args[6]->i));
  const RequantParams p{static_cast<int32_t>(args[1]->i), static_cast<int32_t>(args[2]->i),
                        static_cast<int32_t>(args[3]->i), static_cast<int32_t>(args[4]->i),
                        static_cast<int32_t>(args[5]->i), static_cast<int32_t>(args[6]->i)};
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    requantize_mve_path(in.data<int8_t>(), out.data<int8_t>(), in.numel(), p);
    return Error::Ok;
  }
#endif
  requantize_scalar(in.data<int8_t>(), out.data<int8_t>(), in.numel(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::requantize.out", requantize_out, "TIIIIIIT");

}  // namespace pteron::cortex_m
