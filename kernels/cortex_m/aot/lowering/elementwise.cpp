// Elementwise int8 ops: add, mul, clamps (relu, relu6, hardtanh) and tables (sigmoid, tanh, GELU,
// ...).
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/compile_error.h"
#include "compiler/passes/host_runner.h"
#include "kernels/cortex_m/aot/lowering/lowering.h"
#include "kernels/cortex_m/util/broadcast_rows.h"

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
  const ValueId q_out = g_.node(out->quant).outputs[0];
  // The kernel takes `self` at the output's shape and `other` at it or broadcast as rows (a
  // squeeze-excite's channel weights): the full operand goes first.
  const std::vector<int64_t>& shape = g_.value(q_out).spec.sizes;
  if (g_.value(a->q).spec.sizes != shape) std::swap(a, b);
  const std::vector<int64_t>& other = g_.value(b->q).spec.sizes;
  BroadcastRows rows;
  if (g_.value(a->q).spec.sizes != shape ||
      !broadcast_rows(shape.data(), static_cast<int32_t>(shape.size()), other.data(),
                      static_cast<int32_t>(other.size()), &rows))
    return keep("inputs broadcast other than one along a run of dimensions");
  const Requant r = quantize_multiplier(a->p.scale * b->p.scale / out->p.scale);
  if (r.shift > kMaxShift || r.shift < kMinShift) return keep("output scale out of range");
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

// Ops that act on each element alone (their tensor operands all of the output's shape, or
// one-element constants; comparisons and selects too, softplus's threshold): a chain or tree of
// them from one dequantized input to a quantize is a function of that input's 256 int8 values,
// and becomes a table.
bool elementwise_op(const std::string& op) {
  static const char* const kOps[] = {
      "aten::sigmoid.default",     "aten::tanh.default",       "aten::hardswish.default",
      "aten::hardsigmoid.default", "aten::silu.default",       "aten::gelu.default",
      "aten::elu.default",         "aten::leaky_relu.default", "aten::softplus.default",
      "aten::mish.default",        "aten::exp.default",        "aten::log.default",
      "aten::sqrt.default",        "aten::rsqrt.default",      "aten::abs.default",
      "aten::neg.default",         "aten::erf.default",        "aten::reciprocal.default",
      "aten::sin.default",         "aten::cos.default",        "aten::log1p.default",
      "aten::expm1.default",       "aten::logit.default",      "aten::celu.default",
      "aten::selu.default",        "aten::relu.default",       "aten::hardtanh.default",
      "aten::clamp.default",       "aten::add.Tensor",         "aten::add.Scalar",
      "aten::sub.Tensor",          "aten::sub.Scalar",         "aten::mul.Tensor",
      "aten::mul.Scalar",          "aten::div.Tensor",         "aten::div.Scalar",
      "aten::pow.Tensor_Scalar",   "aten::maximum.default",    "aten::minimum.default",
      "aten::rsub.Scalar",         "aten::where.self",         "aten::gt.Scalar",
      "aten::lt.Scalar",           "aten::ge.Scalar",          "aten::le.Scalar",
      "aten::eq.Scalar",           "aten::ne.Scalar"};
  for (const char* name : kOps)
    if (op == name) return true;
  return false;
}

constexpr size_t kMaxTableOps = 16;  // a chain longer than this is not an activation

}  // namespace

// The elementwise ops from one dequantized int8 value to `root` (root last, in graph order), or
// empty when `root` is not such a tree: every tensor operand is the dequantize's output, a
// one-element constant, or another op of the tree, and every value has the output's shape.
std::vector<NodeId> Lowering::table_cone(const Node& root, ValueId* source) const {
  std::vector<NodeId> cone, todo = {root.id};
  ValueId dq_value = ir::kNoValue;
  const auto& shape = g_.value(root.outputs[0]).spec.sizes;
  while (!todo.empty()) {
    const NodeId id = todo.back();
    todo.pop_back();
    if (std::find(cone.begin(), cone.end(), id) != cone.end()) continue;
    const Node& n = g_.node(id);
    if (delegated_.count(id) || !elementwise_op(n.op.str()) || n.outputs.size() != 1 ||
        g_.value(n.outputs[0]).spec.sizes != shape || cone.size() >= kMaxTableOps)
      return {};
    cone.push_back(id);
    for (ValueId v : n.inputs()) {
      const ir::Value& value = g_.value(v);
      if (value.is_constant() && value.spec.numel() == 1) continue;
      if (!value.is_intermediate()) return {};
      const Node& producer = g_.node(value.producer);
      if (is_op(producer, kDequant)) {
        // A delegate's dequantize (its output leaves the region) stays: the table would read
        // the region's int8 value inside it, and the delegate's output would be removed.
        if (delegated_.count(value.producer)) return {};
        if (dequantized(g_, v) == std::nullopt || value.spec.sizes != shape) return {};
        if (dq_value != ir::kNoValue && dq_value != v) {
          // Two dequantizes of the same int8 value (one per user, as PT2E writes them).
          if (dequantized(g_, v)->q != dequantized(g_, dq_value)->q) return {};
        } else {
          dq_value = v;
        }
        continue;
      }
      todo.push_back(value.producer);
    }
  }
  if (dq_value == ir::kNoValue) return {};
  std::vector<NodeId> ordered;  // graph order: each op after its operands
  for (NodeId id : g_.nodes())
    if (std::find(cone.begin(), cone.end(), id) != cone.end()) ordered.push_back(id);
  cone = std::move(ordered);
  *source = dq_value;
  return cone;
}

// dequantize -> the cone's ops -> quantize, run on the host's kernels for each of the 256 int8
// inputs: the table is what the float graph computes, input by input (nullopt, with the reason
// kept, when a step does not run on the host).
std::optional<std::vector<int8_t>> Lowering::table_of(const std::vector<NodeId>& cone,
                                                      ValueId dequantized_value,
                                                      const QuantOutput& out) {
  Graph t;
  std::map<ValueId, ValueId> to_t;  // this graph's values -> the table graph's
  std::map<ValueId, std::vector<uint8_t>> bytes;
  const ValueId codes = t.add_input("codes", int8_spec({256}));
  for (int i = 0; i < 256; ++i) bytes[codes].push_back(static_cast<uint8_t>(i - 128));
  const auto float256 = TensorSpec::contiguous(ScalarType::Float, {256});
  const auto copy = [&](const Node& from, ir::TensorSpec spec) {
    std::vector<Argument> args = from.args;
    for (Argument& a : args) {
      if (!a.is_tensor()) continue;
      const ValueId v = a.tensor();
      if (auto it = to_t.find(v); it != to_t.end()) {
        a = TensorRef{it->second};
      } else if (g_.value(v).is_constant()) {
        const ir::Value& c = g_.value(v);
        to_t[v] = t.add_constant(t.unique_name(c.name), c.spec, *c.constant);
        bytes[to_t[v]].assign(c.constant->bytes.begin(), c.constant->bytes.end());
        a = TensorRef{to_t[v]};
      } else {
        a = TensorRef{codes};  // the dequantize's int8 input
      }
    }
    const NodeId id =
        t.add_node(*from.schema, std::move(args), {NewValue{t.unique_name("step"), spec}});
    to_t[from.outputs[0]] = t.node(id).outputs[0];
    return id;
  };
  std::vector<NodeId> steps = {copy(g_.node(g_.value(dequantized_value).producer), float256)};
  // Every dequantize of the same int8 value is the same function of the codes.
  for (NodeId id : cone)
    for (ValueId v : g_.node(id).inputs())
      if (g_.value(v).is_intermediate() && is_op(g_.node(g_.value(v).producer), kDequant))
        to_t[v] = t.node(steps[0]).outputs[0];
  for (NodeId id : cone) {
    const Node& n = g_.node(id);
    steps.push_back(copy(n, TensorSpec::contiguous(g_.value(n.outputs[0]).spec.dtype, {256})));
  }
  steps.push_back(copy(g_.node(out.quant), int8_spec({256})));
  const compiler::ValueBytes known = [&](ValueId v) -> std::span<const uint8_t> {
    auto it = bytes.find(v);
    return it == bytes.end() ? std::span<const uint8_t>{} : std::span<const uint8_t>(it->second);
  };
  try {
    for (NodeId id : steps)
      bytes[t.node(id).outputs[0]] = std::move(compiler::run_node_on_host(t, t.node(id), known)[0]);
  } catch (const compiler::CompileError& e) {
    keep(std::string("its table did not compute: ") + e.what());
    return std::nullopt;
  }
  const std::vector<uint8_t>& table = bytes[t.node(steps.back()).outputs[0]];
  return std::vector<int8_t>(table.begin(), table.end());
}

bool Lowering::table(const Node& root) {
  if (root.outputs.size() != 1 || root.outputs[0] == ir::kNoValue) return false;
  auto out = quantized_output(g_, root, false);
  if (!out) return false;
  ValueId source = ir::kNoValue;
  const std::vector<NodeId> cone = table_cone(root, &source);
  if (cone.empty()) return false;
  const std::optional<std::vector<int8_t>> values = table_of(cone, source, *out);
  if (!values) return false;
  const auto x = dequantized(g_, source);
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId entries =
      add_constant(g_, g_.value(root.outputs[0]).name + "_table", ScalarType::Char, {256}, *values);
  const ValueId y = new_node("quantized_lut", {TensorRef{x->q}, TensorRef{entries}},
                             int8_spec(g_.value(q_out).spec.sizes), root, out->quant);
  finish(*out, y);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
