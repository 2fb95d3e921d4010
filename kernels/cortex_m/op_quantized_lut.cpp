// cortex_m::quantized_lut.out(Tensor input, Tensor table, *, Tensor(a!) out)
//
// An elementwise function of one int8 tensor as the table of its 256 results: out[i] =
// table[input[i] + 128]. The compiler fills the table by running the float graph's own
// dequantize -> op -> quantize on every int8 value (kernels/cortex_m/aot/lowering/elementwise.cpp),
// so sigmoid, tanh, hardswish, GELU, SiLU and the other unary ops of a quantized graph stay int8,
// bit for bit what the float ops between their Q/DQ compute. pteron's own op: ExecuTorch's
// Cortex-M backend leaves them float; TFLite Micro computes its int8 LOGISTIC and TANH with
// fixed-point approximations.
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_lut.out";

Error quantized_lut_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& table = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, table, "table"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  if (table.numel() != 256) {
    return fail(Error::InvalidArgument, "%s: table must have 256 entries, got %lld", kOp,
                static_cast<long long>(table.numel()));
  }
  const int8_t* x = in.data<int8_t>();
  int8_t* y = out.data<int8_t>();
  const int64_t n = in.numel();
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {  // 16 byte lookups per gather load
    const auto* t = reinterpret_cast<const uint8_t*>(table.data<int8_t>());
    const uint8x16_t flip = vdupq_n_u8(0x80);
    for (int64_t i = 0; i < n; i += 16) {
      const mve_pred16_t live = vctp8q(static_cast<uint32_t>(n - i));
      const uint8x16_t index =
          veorq_u8(vldrbq_z_u8(reinterpret_cast<const uint8_t*>(x + i), live), flip);
      vstrbq_p_u8(reinterpret_cast<uint8_t*>(y + i), vldrbq_gather_offset_z_u8(t, index, live),
                  live);
    }
    return Error::Ok;
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (host::lut(x, table.data<int8_t>(), y, n)) return Error::Ok;
#endif
  const int8_t* t = table.data<int8_t>() + 128;  // indexed by the signed value
  for (int64_t i = 0; i < n; ++i) y[i] = t[x[i]];
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_lut.out", quantized_lut_out, "TTT");

}  // namespace pteron::cortex_m
