// cortex_m::quantized_clamp.out(Tensor input, int activation_min, int activation_max, *,
//     Tensor(a!) out)
//
// A relu/clamp/hardtanh whose input and output share scale and zero point becomes a clamp of
// the int8 values (the bounds already quantised). pteron's own op: ExecuTorch's Cortex-M
// backend fuses activations into the op before them, which pteron's lowering also does when
// it can; this is for an activation that stands alone.
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_clamp.out";

void clamp_scalar(const int8_t* in, int8_t* out, int64_t n, int8_t lo, int8_t hi) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] < lo ? lo : in[i] > hi ? hi : in[i];
}

#if PTERON_CORTEX_M_MVE
void clamp_mve(const int8_t* in, int8_t* out, int64_t n, int8_t lo, int8_t hi) {
  for (int64_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    const int8x16_t x = vldrbq_z_s8(in + i, p);
    vstrbq_p_s8(out + i, vminq_s8(vmaxq_s8(x, vdupq_n_s8(lo)), vdupq_n_s8(hi)), p);
  }
}
#endif

Error quantized_clamp_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  PTERON_TRY(check_activation(kOp, args[1]->i, args[2]->i));
  const int8_t lo = static_cast<int8_t>(args[1]->i), hi = static_cast<int8_t>(args[2]->i);
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    clamp_mve(in.data<int8_t>(), out.data<int8_t>(), in.numel(), lo, hi);
    return Error::Ok;
  }
#endif
  clamp_scalar(in.data<int8_t>(), out.data<int8_t>(), in.numel(), lo, hi);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_clamp.out", quantized_clamp_out, "TIIT");

}  // namespace pteron::cortex_m
