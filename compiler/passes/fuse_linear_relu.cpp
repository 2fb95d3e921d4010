#include "compiler/passes/fuse_linear_relu.h"

#include <algorithm>

#include "compiler/passes/custom_op_schema.h"

namespace pteron::compiler {

const ir::OpSchema& linear_relu_schema() {
  static const ir::OpSchema& functional = register_single_output_op(
      "pteron::linear_relu", {{"input", "Tensor"}, {"weight", "Tensor"}, {"bias", "Tensor?"}});
  return functional;
}

int fuse_linear_relu(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    const ir::Node& relu = graph.node(id);
    if (relu.op.str() != "aten::relu.default") continue;
    const ir::Value& x = graph.value(relu.args[0].tensor());
    if (!x.is_intermediate() || x.users.size() != 1 || delegated.count(x.producer) ||
        std::find(graph.outputs().begin(), graph.outputs().end(), x.id) != graph.outputs().end()) {
      continue;
    }
    const ir::Node& linear = graph.node(x.producer);
    if (linear.op.str() != "aten::linear.default" || x.spec.dtype != ScalarType::Float ||
        graph.value(relu.outputs[0]).spec.dtype != ScalarType::Float) {
      continue;
    }
    std::vector<ir::Argument> args = linear.args;
    if (args.size() < 3) args.resize(3, ir::Argument(ir::None{}));
    const ir::NodeId linear_id = linear.id;
    const ir::ValueId relu_out = relu.outputs[0];
    // The linear node becomes the fused call (keeping its debug handle: the profiler charges the
    // product to the linear's module) and takes over the relu's users.
    graph.set_op(linear_id, linear_relu_schema(), std::move(args));
    graph.replace_all_uses(relu_out, x.id);
    graph.remove_node(id);
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
