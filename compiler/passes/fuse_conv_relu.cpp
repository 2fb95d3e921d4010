#include "compiler/passes/fuse_conv_relu.h"

#include <algorithm>

#include "compiler/passes/custom_op_schema.h"

namespace pteron::compiler {

const ir::OpSchema& convolution_relu_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::convolution_relu", {{"input", "Tensor"},
                                                             {"weight", "Tensor"},
                                                             {"bias", "Tensor?"},
                                                             {"stride", "int[]"},
                                                             {"padding", "int[]"},
                                                             {"dilation", "int[]"},
                                                             {"transposed", "bool"},
                                                             {"output_padding", "int[]"},
                                                             {"groups", "int"}});
  return functional;
}

namespace {

// The convolutions the optimized kernel's SGEMM path takes (others would run the portable
// convolution and a separate ReLU pass inside the fused kernel: no gain).
bool fusable_convolution(const ir::Graph& graph, const ir::Node& conv) {
  if (conv.op.str() != "aten::convolution.default" || conv.args.size() != 9) return false;
  const ir::Argument& transposed = conv.args[6];
  const ir::Argument& groups = conv.args[8];
  if (!transposed.is<bool>() || transposed.get<bool>() || !groups.is<int64_t>() ||
      groups.get<int64_t>() != 1) {
    return false;
  }
  const ir::Value& input = graph.value(conv.args[0].tensor());
  return input.spec.rank() == 4 && input.spec.dtype == ScalarType::Float;
}

}  // namespace

int fuse_conv_relu(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
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
    const ir::Node& conv = graph.node(x.producer);
    if (!fusable_convolution(graph, conv) || x.spec.dtype != ScalarType::Float ||
        graph.value(relu.outputs[0]).spec.dtype != ScalarType::Float) {
      continue;
    }
    std::vector<ir::Argument> args = conv.args;
    const ir::NodeId conv_id = conv.id;
    const ir::ValueId relu_out = relu.outputs[0];
    // The convolution node becomes the fused call (keeping its debug handle, so the profiler
    // charges it to the conv's module) and takes over the relu's users.
    graph.set_op(conv_id, convolution_relu_schema(), std::move(args));
    graph.replace_all_uses(relu_out, x.id);
    graph.remove_node(id);
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
