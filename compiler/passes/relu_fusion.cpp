#include "compiler/passes/relu_fusion.h"

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
