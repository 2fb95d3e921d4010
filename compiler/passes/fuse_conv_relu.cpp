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

const ir::OpSchema& convolution_add_relu_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::convolution_add_relu", {{"input", "Tensor"},
                                                                 {"weight", "Tensor"},
                                                                 {"bias", "Tensor?"},
                                                                 {"stride", "int[]"},
                                                                 {"padding", "int[]"},
                                                                 {"dilation", "int[]"},
                                                                 {"transposed", "bool"},
                                                                 {"output_padding", "int[]"},
                                                                 {"groups", "int"},
                                                                 {"other", "Tensor"}});
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

// `v` is computed by a node, read only once, and not a graph output.
bool single_use_intermediate(const ir::Graph& graph, const ir::Value& v) {
  return v.is_intermediate() && v.users.size() == 1 &&
         std::find(graph.outputs().begin(), graph.outputs().end(), v.id) == graph.outputs().end();
}

// relu(add(conv(...), other)) (either operand order, alpha 1, `other` of the result's shape) ->
// convolution_add_relu(..., other) in place of the add, which runs after both the convolution
// and `other`'s producer (resnet's downsample branch comes after the block's second conv).
bool fuse_residual(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                   const ir::Node& relu, const ir::Value& sum) {
  const ir::Node& add = graph.node(sum.producer);
  if (add.op.str() != "aten::add.Tensor" || add.args.size() < 2 || !add.args[0].is_tensor() ||
      !add.args[1].is_tensor() ||
      (add.args.size() > 2 && !add.args[2].is_none() && add.args[2].to_double() != 1.0)) {
    return false;
  }
  for (int side = 0; side < 2; ++side) {
    const ir::Value& c = graph.value(add.args[side].tensor());
    const ir::Value& other = graph.value(add.args[1 - side].tensor());
    if (c.id == other.id || !single_use_intermediate(graph, c) || delegated.count(c.producer) ||
        !fusable_convolution(graph, graph.node(c.producer)) || c.spec.dtype != ScalarType::Float ||
        other.spec.dtype != ScalarType::Float || other.spec.sizes != sum.spec.sizes ||
        c.spec.sizes != sum.spec.sizes) {
      continue;
    }
    const ir::NodeId conv_id = c.producer, add_id = add.id, relu_id = relu.id;
    std::vector<ir::Argument> args = graph.node(conv_id).args;
    args.push_back(add.args[1 - side]);
    const ir::ValueId relu_out = relu.outputs[0];
    graph.set_op(add_id, convolution_add_relu_schema(), std::move(args));
    graph.replace_all_uses(relu_out, sum.id);
    graph.remove_node(relu_id);
    graph.remove_node(conv_id);
    return true;
  }
  return false;
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
    if (graph.node(x.producer).op.str() == "aten::add.Tensor" && !delegated.count(x.producer) &&
        graph.value(relu.outputs[0]).spec.dtype == ScalarType::Float) {
      if (fuse_residual(graph, delegated, relu, x)) ++fused;
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
