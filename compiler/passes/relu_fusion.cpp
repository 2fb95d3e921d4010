#include "compiler/passes/relu_fusion.h"

#include <limits>

#include "compiler/ir/op_names.h"

namespace pteron::compiler {

const ir::Value* relu_fusion_input(const ir::Graph& graph,
                                   const std::unordered_set<ir::NodeId>& delegated, ir::NodeId id) {
  // Dynamic nodes too: the producer keeps its output (its fused kernel resizes it).
  if (!graph.has_node(id) || delegated.count(id)) return nullptr;
  const ir::Node& relu = graph.node(id);
  if (!relu.is(ops::aten::relu) || graph.value(relu.outputs[0]).spec.dtype != ScalarType::Float) {
    return nullptr;
  }
  const ir::Value& x = graph.value(relu.arg("self").tensor());
  if (!single_use_intermediate(graph, x) || delegated.count(x.producer)) return nullptr;
  return &x;
}

ClampFusion clamp_fusion_input(const ir::Graph& graph,
                               const std::unordered_set<ir::NodeId>& delegated, ir::NodeId id) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!graph.has_node(id) || delegated.count(id)) return {};
  const ir::Node& n = graph.node(id);
  ClampFusion fusion;
  if (n.is(ops::aten::relu)) {
    fusion = {nullptr, 0.0, kInf};
  } else if (n.is(ops::aten::hardtanh)) {
    fusion = {nullptr, n.arg("min_val").to_double(), n.arg("max_val").to_double()};
  } else if (n.is(ops::aten::clamp)) {
    const ir::Argument& lo = n.arg("min");
    const ir::Argument& hi = n.arg("max");
    fusion = {nullptr, lo.is_none() ? -kInf : lo.to_double(), hi.is_none() ? kInf : hi.to_double()};
  } else {
    return {};
  }
  // torch.clamp with min > max gives max everywhere; a clamp kernel written as
  // max(lo, min(hi, x)) gives lo: such graphs keep their own clamp.
  if (!(fusion.lo <= fusion.hi) || graph.value(n.outputs[0]).spec.dtype != ScalarType::Float) {
    return {};
  }
  const ir::Value& x = graph.value(n.arg("self").tensor());
  if (!single_use_intermediate(graph, x) || delegated.count(x.producer)) return {};
  fusion.input = &x;
  return fusion;
}

void absorb_relu(ir::Graph& graph, ir::NodeId relu, ir::NodeId producer, const ir::OpSchema& schema,
                 std::vector<ir::Argument> args) {
  const ir::ValueId relu_out = graph.node(relu).outputs[0];
  const ir::ValueId fused_out = graph.node(producer).outputs[0];
  const std::string relu_name = graph.value(relu_out).name;
  graph.set_op(producer, schema, std::move(args));
  graph.replace_all_uses(relu_out, fused_out);
  graph.remove_node(relu);
  // The fused output holds relu's values: it takes relu's name (numerics debugging compares
  // values by name, and a graph output keeps the name the model gave it).
  graph.rename_value(fused_out, relu_name);
}

}  // namespace pteron::compiler
