// Elementwise int8 ops: add, mul, clamps (relu, relu6, hardtanh) and tables (sigmoid, tanh, GELU,
// ...).
#include <algorithm>
#include <cmath>

#include "compiler/compile_error.h"
#include "compiler/passes/host_runner.h"
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

namespace {

// Unary float ops between a dequantize and a quantize that become a table of 256 results.
bool tabulated_op(const std::string& op) {
  static const char* const kOps[] = {
      "aten::sigmoid.default",     "aten::tanh.default",       "aten::hardswish.default",
      "aten::hardsigmoid.default", "aten::silu.default",       "aten::gelu.default",
      "aten::elu.default",         "aten::leaky_relu.default", "aten::softplus.default",
      "aten::mish.default",        "aten::exp.default",        "aten::log.default",
      "aten::sqrt.default",        "aten::rsqrt.default",      "aten::abs.default",
      "aten::neg.default",         "aten::erf.default",        "aten::reciprocal.default",
      "aten::sin.default",         "aten::cos.default",        "aten::log1p.default",
      "aten::expm1.default",       "aten::logit.default",      "aten::celu.default",
      "aten::selu.default"};
  for (const char* name : kOps)
    if (op == name) return true;
  return false;
}

}  // namespace

bool Lowering::is_tabulated(const Node& n) const { return tabulated_op(n.op.str()); }

// dequantize -> op -> quantize, run on the host's kernels for each of the 256 int8 inputs: the
// table is what the float graph computes, input by input (nullopt, with the reason kept, when a
// step does not run on the host).
std::optional<std::vector<int8_t>> Lowering::table_of(const Node& n, const QuantOutput& out) {
  const Node& dq = g_.node(g_.value(n.arg("self").tensor()).producer);
  const Node& q = g_.node(out.quant);
  Graph t;
  const ValueId codes = t.add_input("codes", int8_spec({256}));
  const auto step = [&](const Node& from, const char* input, ValueId x, ir::ScalarType dtype) {
    std::vector<Argument> args = from.args;
    args[from.arg_index(input)] = TensorRef{x};
    const NodeId id =
        t.add_node(*from.schema, std::move(args),
                   {NewValue{t.unique_name("step"), TensorSpec::contiguous(dtype, {256})}});
    return id;
  };
  const NodeId d = step(dq, "input", codes, ir::ScalarType::Float);
  const NodeId f = step(n, "self", t.node(d).outputs[0], ir::ScalarType::Float);
  const NodeId r = step(q, "input", t.node(f).outputs[0], ir::ScalarType::Char);
  std::vector<uint8_t> bytes[4];
  for (int i = 0; i < 256; ++i) bytes[0].push_back(static_cast<uint8_t>(i - 128));
  const ValueId values[4] = {codes, t.node(d).outputs[0], t.node(f).outputs[0],
                             t.node(r).outputs[0]};
  const compiler::ValueBytes known = [&](ValueId v) -> std::span<const uint8_t> {
    for (int i = 0; i < 4; ++i)
      if (values[i] == v && !bytes[i].empty()) return bytes[i];
    return {};
  };
  try {
    const NodeId order[3] = {d, f, r};
    for (int i = 0; i < 3; ++i)
      bytes[i + 1] = std::move(compiler::run_node_on_host(t, t.node(order[i]), known)[0]);
  } catch (const compiler::CompileError& e) {
    keep(std::string("its table did not compute: ") + e.what());
    return std::nullopt;
  }
  return std::vector<int8_t>(bytes[3].begin(), bytes[3].end());
}

bool Lowering::lut(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  const std::optional<std::vector<int8_t>> table = table_of(n, *out);
  if (!table) return false;
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId values =
      add_constant(g_, n.outputs.empty() ? "lut" : g_.value(n.outputs[0]).name + "_table",
                   ir::ScalarType::Char, {256}, *table);
  const ValueId y = new_node("quantized_lut", {TensorRef{x->q}, TensorRef{values}},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
