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
#include "runtime/kernel/kernel.h"

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
  const int8_t* t = table.data<int8_t>() + 128;  // indexed by the signed value
  int8_t* y = out.data<int8_t>();
  const int64_t n = in.numel();
  for (int64_t i = 0; i < n; ++i) y[i] = t[x[i]];
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_lut.out", quantized_lut_out, "TTT");

}  // namespace pteron::cortex_m
