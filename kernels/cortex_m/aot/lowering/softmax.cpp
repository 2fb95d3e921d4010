// Softmax over the last dim (CMSIS-NN's int8 softmax, prepared as TFLite does).
#include <algorithm>
#include <cmath>

#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {

bool Lowering::softmax(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  const int64_t rank = static_cast<int64_t>(g_.value(x->q).spec.rank());
  int64_t dim = n.arg("dim").get<int64_t>();
  if (dim < 0) dim += rank;
  if (dim != rank - 1) return keep("softmax over a dim other than the last");
  if (out->p.zp != -128 || std::fabs(out->p.scale * 256.0 - 1.0) > 1e-6) {
    return keep("output qparams are not scale 1/256, zero point -128 (CMSIS-NN softmax)");
  }
  // TFLite's int8 softmax preparation (5 integer bits for the scaled input differences).
  constexpr int kIntegerBits = 5;
  const double real = std::min(x->p.scale * double(1 << (31 - kIntegerBits)), 2147483647.0);
  const Requant r = quantize_multiplier(real);
  if (r.shift < 0 || r.shift > 30) return keep("input scale out of range");
  const double max_rescaled = double((1 << kIntegerBits) - 1) * std::ldexp(1.0, 31 - kIntegerBits) /
                              std::ldexp(1.0, r.shift);
  const int64_t diff_min = -static_cast<int64_t>(std::floor(max_rescaled));
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y = new_node("softmax",
                             {TensorRef{x->q}, int64_t{-1}, x->p.zp, out->p.zp,
                              int64_t{r.multiplier}, int64_t{r.shift}, diff_min},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
