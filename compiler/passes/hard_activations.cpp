// recompose_hard_activations: torch.export's core-ATen decomposition writes hardswish as
//   div(mul(x, clamp(clamp(add(x, 3), 0), None, 6)), 6)
// and hardsigmoid as div(clamp(clamp(add(x, 3), 0), None, 6), 6): five and four passes over the
// tensor that no backend fuses, and ops that split XNNPACK's regions. MobileNetV3 has 20 and 8 of
// them. Every backend and kernel library has the whole op, so the chain becomes one node again.
#include <algorithm>
#include <cmath>

#include "compiler/ir/op_names.h"
#include "compiler/passes/activation_bounds.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// `v`'s only reader when `v` is a single-use intermediate.
const ir::Node* sole_reader(const ir::Graph& graph, ir::ValueId v) {
  const ir::Value& value = graph.value(v);
  if (!single_use_intermediate(graph, value)) return nullptr;
  return &graph.node(value.users[0]);
}

// A scalar operand equal to `k` (a Python number, a Scalar or a one-element float constant).
bool is_constant(const ir::Graph& graph, const ir::Argument& a, double k) {
  const std::optional<double> v = constant_scalar(graph, a);
  return v.has_value() && *v == k;
}

// `n` adds the number 3 to its tensor `self` (add.Tensor or add.Scalar, alpha 1).
bool adds_three(const ir::Graph& graph, const ir::Node& n) {
  if (!n.is(ops::aten::add_Tensor) && !n.is(ops::aten::add_Scalar)) return false;
  if (n.args.size() < 2 || !n.arg("self").is_tensor()) return false;
  if (n.args.size() > 2 && !n.arg("alpha").is_none() && n.arg("alpha").to_double() != 1.0)
    return false;
  return is_constant(graph, n.arg("other"), 3.0);
}

// `n` divides its tensor `self` by the number 6 (div.Tensor or div.Scalar, no rounding mode).
bool divides_by_six(const ir::Graph& graph, const ir::Node& n) {
  if (!n.is(ops::aten::div_Tensor) && !n.is(ops::aten::div_Scalar)) return false;
  return n.args.size() == 2 && n.arg("self").is_tensor() && is_constant(graph, n.arg("other"), 6.0);
}

// From the clamp(s) reading `v`: the value clamped to [0, 6] (one clamp or hardtanh, or a lower
// and an upper clamp in either order), each clamp's node appended to `chain`.
ir::ValueId clamp_zero_six(const ir::Graph& graph, ir::ValueId v, std::vector<ir::NodeId>* chain) {
  double lo = -INFINITY, hi = INFINITY;
  for (int clamps = 0; clamps < 2 && !(lo == 0.0 && hi == 6.0); ++clamps) {
    const ir::Node* c = sole_reader(graph, v);
    if (c == nullptr) return ir::kNoValue;
    // The op first: arg() throws for a name the reader's schema lacks (a convolution's "input").
    const std::optional<std::pair<double, double>> bounds = activation_bounds(*c);
    if (!bounds.has_value() || c->is(ops::aten::relu) || !c->arg("self").is_tensor())
      return ir::kNoValue;
    lo = std::max(lo, bounds->first);
    hi = std::min(hi, bounds->second);
    chain->push_back(c->id);
    v = c->outputs[0];
  }
  return lo == 0.0 && hi == 6.0 ? v : ir::kNoValue;
}

struct HardActivation {
  const ir::OpSchema* schema = nullptr;
  ir::NodeId last = ir::kNoNode;    // becomes the op, keeping its output
  std::vector<ir::NodeId> removed;  // in order: the add, the clamps, a mul
};

// The chain starting at `add`, or an empty result.
HardActivation match(const ir::Graph& graph, const ir::Node& add) {
  HardActivation m;
  if (!adds_three(graph, add)) return m;
  const ir::ValueId x = add.arg("self").tensor();
  const ir::TensorSpec& spec = graph.value(x).spec;
  if (spec.dtype != ScalarType::Float || graph.value(add.outputs[0]).spec != spec) return m;
  m.removed.push_back(add.id);
  const ir::ValueId relu6 = clamp_zero_six(graph, add.outputs[0], &m.removed);
  if (relu6 == ir::kNoValue) return {};
  const ir::Node* next = sole_reader(graph, relu6);
  if (next == nullptr) return {};
  static const ir::OpSchema* hardswish = ir::OpSchemaRegistry::global().find(ops::aten::hardswish);
  static const ir::OpSchema* hardsigmoid =
      ir::OpSchemaRegistry::global().find(ops::aten::hardsigmoid);
  if (divides_by_six(graph, *next)) {
    m.schema = hardsigmoid;
    m.last = next->id;
  } else if (is_tensor_mul(*next) && graph.value(next->outputs[0]).spec == spec &&
             (next->arg("self").tensor() == x || next->arg("other").tensor() == x)) {
    const ir::Node* div = sole_reader(graph, next->outputs[0]);
    if (div == nullptr || !divides_by_six(graph, *div)) return {};
    m.removed.push_back(next->id);
    m.schema = hardswish;
    m.last = div->id;
  }
  if (m.schema == nullptr) return {};
  return m;
}

}  // namespace

int recompose_hard_activations(ir::Graph& graph) {
  int recomposed = 0;
  for (ir::NodeId id : std::vector<ir::NodeId>(graph.nodes())) {
    if (!graph.has_node(id)) continue;
    const HardActivation m = match(graph, graph.node(id));
    if (m.schema == nullptr) continue;
    const ir::ValueId x = graph.node(id).arg("self").tensor();
    graph.set_op(m.last, *m.schema, {ir::Argument(ir::TensorRef{x})});
    for (auto it = m.removed.rbegin(); it != m.removed.rend(); ++it) graph.remove_node(*it);
    ++recomposed;
  }
  return recomposed;
}

}  // namespace pteron::compiler
