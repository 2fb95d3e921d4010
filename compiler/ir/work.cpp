#include "compiler/ir/work.h"

#include <set>
#include <string>

namespace pteron::compiler {
namespace {

const ir::TensorSpec* tensor_arg(const ir::Graph& g, const ir::Node& node, size_t index) {
  if (index >= node.args.size() || !node.args[index].is_tensor()) return nullptr;
  return &g.value(node.args[index].tensor()).spec;
}

const ir::TensorSpec* output(const ir::Graph& g, const ir::Node& node) {
  if (node.outputs.empty() || node.outputs[0] == ir::kNoValue) return nullptr;
  return &g.value(node.outputs[0]).spec;
}

uint64_t numel(const ir::TensorSpec* s) { return s ? static_cast<uint64_t>(s->numel()) : 0; }

int64_t last_dim(const ir::TensorSpec* s) { return s && s->rank() ? s->sizes.back() : 0; }

// Ops that do a handful of arithmetic per output element.
const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> ops = {"add",
                                            "sub",
                                            "mul",
                                            "div",
                                            "rsub",
                                            "neg",
                                            "abs",
                                            "exp",
                                            "log",
                                            "sqrt",
                                            "rsqrt",
                                            "pow",
                                            "relu",
                                            "relu6",
                                            "gelu",
                                            "silu",
                                            "sigmoid",
                                            "tanh",
                                            "hardtanh",
                                            "hardswish",
                                            "hardsigmoid",
                                            "leaky_relu",
                                            "elu",
                                            "clamp",
                                            "clamp_min",
                                            "clamp_max",
                                            "minimum",
                                            "maximum",
                                            "where",
                                            "erf",
                                            "reciprocal",
                                            "sin",
                                            "cos",
                                            "_softmax",
                                            "softmax",
                                            "_log_softmax",
                                            "log_softmax",
                                            "native_layer_norm",
                                            "layer_norm",
                                            "_native_batch_norm_legit_no_training",
                                            "native_batch_norm",
                                            "eq",
                                            "ne",
                                            "lt",
                                            "le",
                                            "gt",
                                            "ge",
                                            "logical_and",
                                            "logical_or",
                                            "logical_not",
                                            "bitwise_and",
                                            "bitwise_or",
                                            "bitwise_not",
                                            "masked_fill",
                                            "floor",
                                            "ceil",
                                            "round"};
  return ops;
}

// Reductions and pooling: one operation per input element.
const std::set<std::string>& reduction_ops() {
  static const std::set<std::string> ops = {"sum",
                                            "mean",
                                            "amax",
                                            "amin",
                                            "max",
                                            "min",
                                            "argmax",
                                            "argmin",
                                            "prod",
                                            "var",
                                            "cumsum",
                                            "avg_pool2d",
                                            "max_pool2d",
                                            "max_pool2d_with_indices",
                                            "adaptive_avg_pool2d",
                                            "_adaptive_avg_pool2d"};
  return ops;
}

}  // namespace

bool is_direct_convolution(const std::string& op) {
  return op == "convolution" || op == "convolution_relu" || op == "convolution_add_relu" ||
         op == "convolution_clamp" || op == "convolution_silu" || op == "convolution_hardswish" ||
         op == "convolution_scaled" || op == "conv2d" || op == "conv1d";
}

uint64_t multiply_adds(const ir::Graph& g, const ir::Node& node) {
  const std::string& op = node.op.name;
  const ir::TensorSpec* out = output(g, node);
  if (is_direct_convolution(op)) {
    // args: input, weight [Cout, Cin/groups, k...], ...
    const ir::TensorSpec* w = tensor_arg(g, node, 1);
    if (!w || w->rank() < 2) return 0;
    uint64_t per_output = 1;
    for (size_t d = 1; d < w->rank(); ++d) per_output *= static_cast<uint64_t>(w->sizes[d]);
    return numel(out) * per_output;
  }
  if (op == "conv2d_winograd") {  // weights [36, Cin, Cout]: the direct 3x3 convolution's count
    const ir::TensorSpec* u = tensor_arg(g, node, 1);
    if (!u || u->rank() != 3) return 0;
    return numel(out) * static_cast<uint64_t>(u->sizes[1]) * 9;
  }
  // pteron::linear_relu: the ReLU is not counted.
  if (op == "linear" || op == "linear_relu" || op == "mm" || op == "bmm" || op == "matmul")
    return numel(out) * static_cast<uint64_t>(last_dim(tensor_arg(g, node, 0)));
  if (op == "addmm") return numel(out) * static_cast<uint64_t>(last_dim(tensor_arg(g, node, 1)));
  if (op == "scaled_dot_product_attention" || op == "_scaled_dot_product_flash_attention_for_cpu" ||
      op == "sdpa") {
    // q [.., L, E], k [.., S, E]: Q K^T and P V, L * S * E each, per batch-head.
    const ir::TensorSpec* q = tensor_arg(g, node, 0);
    const ir::TensorSpec* k = tensor_arg(g, node, 1);
    if (!q || !k || q->rank() < 2 || k->rank() < 2) return 0;
    return 2 * numel(q) * static_cast<uint64_t>(k->sizes[k->rank() - 2]);
  }
  return 0;
}

uint64_t estimate_flops(const ir::Graph& g, const ir::Node& node) {
  if (const uint64_t macs = multiply_adds(g, node); macs > 0) return 2 * macs;
  const std::string& op = node.op.name;
  if (elementwise_ops().count(op)) return numel(output(g, node));
  if (reduction_ops().count(op)) return numel(tensor_arg(g, node, 0));
  return 0;
}

double region_work(const ir::Graph& g, const std::vector<ir::NodeId>& nodes) {
  double work = 0.0;
  for (ir::NodeId id : nodes) {
    const ir::Node& n = g.node(id);
    const uint64_t macs = multiply_adds(g, n);
    work += static_cast<double>(macs > 0 ? macs : numel(output(g, n)));
  }
  return work;
}

}  // namespace pteron::compiler
