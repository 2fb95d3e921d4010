// Elementwise int8 ops: add, mul and clamps (relu, relu6, hardtanh).
#include <algorithm>
#include <cmath>

#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {

bool Lowering::add(const Node& n) {
  auto a = dequantized(g_, n.arg("self").tensor());
  auto b = n.arg("other").is_tensor() ? dequantized(g_, n.arg("other").tensor()) : std::nullopt;
  if (!a || !b) return false;
  if (n.arg("alpha").to_double() != 1.0) return keep("alpha != 1");
  auto out = quantized_output(g_, n, true);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (g_.value(a->q).spec.sizes != g_.value(b->q).spec.sizes) return keep("inputs broadcast");
  const double twice_max = 2 * std::max(a->p.scale, b->p.scale);
  const Requant ra = quantize_multiplier(a->p.scale / twice_max);
  const Requant rb = quantize_multiplier(b->p.scale / twice_max);
  const Requant ro = quantize_multiplier(twice_max / ((1 << 20) * out->p.scale));
  if (ro.shift > kMaxShift || ro.shift < kMinShift) return keep("output scale out of range");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y =
      new_node("quantized_add",
               {TensorRef{a->q}, a->p.zp, int64_t{ra.multiplier}, int64_t{ra.shift},
                TensorRef{b->q}, b->p.zp, int64_t{rb.multiplier}, int64_t{rb.shift}, out->p.zp,
                int64_t{ro.multiplier}, int64_t{ro.shift}, out->act_min, out->act_max},
               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

bool Lowering::mul(const Node& n) {
  auto a = dequantized(g_, n.arg("self").tensor());
  auto b = n.arg("other").is_tensor() ? dequantized(g_, n.arg("other").tensor()) : std::nullopt;
  if (!a || !b) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (out->p.qmin != -128 || out->p.qmax != 127) return keep("output range is not full int8");
  if (g_.value(a->q).spec.sizes != g_.value(b->q).spec.sizes) return keep("inputs broadcast");
  const Requant r = quantize_multiplier(a->p.scale * b->p.scale / out->p.scale);
  if (r.shift > kMaxShift || r.shift < kMinShift) return keep("output scale out of range");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y = new_node("quantized_mul",
                             {TensorRef{a->q}, a->p.zp, TensorRef{b->q}, b->p.zp, out->p.zp,
                              int64_t{r.multiplier}, int64_t{r.shift}},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

bool Lowering::clamp(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
  const auto bounds = *activation_bounds(n);
  int64_t lo = out->act_min, hi = out->act_max;
  if (std::isfinite(bounds.first)) lo = std::max(lo, quantize_bound(bounds.first, out->p));
  if (std::isfinite(bounds.second)) hi = std::min(hi, quantize_bound(bounds.second, out->p));
  if (lo > hi) return keep("empty clamp range");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y = new_node("quantized_clamp", {TensorRef{x->q}, lo, hi},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
