#include "compiler/passes/fuse_linear_relu.h"

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/relu_fusion.h"

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
    const ir::Value* x = relu_fusion_input(graph, delegated, id);
    if (x == nullptr || x->spec.dtype != ScalarType::Float) continue;
    const ir::Node& linear = graph.node(x->producer);
    if (!linear.is(ops::aten::linear)) continue;
    std::vector<ir::Argument> args = linear.args;
    if (args.size() < 3) args.resize(3, ir::Argument(ir::None{}));
    absorb_relu(graph, id, linear.id, linear_relu_schema(), std::move(args));
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
