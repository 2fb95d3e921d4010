#include "compiler/passes/fuse_rms_norm.h"

#include <optional>

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

using Delegated = std::unordered_set<ir::NodeId>;

// The producer of `v` when it is a single-use intermediate made by a non-delegated `op`.
const ir::Node* chain_producer(const ir::Graph& g, const Delegated& delegated, ir::ValueId v,
                               ir::OpName op) {
  const ir::Node* n = private_producer(g, v);
  if (!is_op(n, op) || delegated.count(n->id) || n->args.empty() || !n->args[0].is_tensor()) {
    return nullptr;
  }
  return n;
}

struct Match {
  ir::ValueId x = ir::kNoValue;
  double eps = 0;
  std::vector<ir::NodeId> chain;  // rsqrt, add, mean, pow: removed once the mul is rewritten
};

// `mul` = x * rsqrt(mean(pow(x, 2), [-1], keepdim=True) + eps), either operand order.
std::optional<Match> match_norm(const ir::Graph& g, const Delegated& delegated,
                                const ir::Node& mul) {
  for (int k = 0; k < 2; ++k) {
    const ir::ValueId x = mul.args[1 - k].tensor();
    const ir::TensorSpec& xs = g.value(x).spec;
    if (xs.dtype != ScalarType::Float || !xs.is_contiguous() || xs.rank() < 1) continue;
    const ir::Node* rsqrt = chain_producer(g, delegated, mul.args[k].tensor(), ops::aten::rsqrt);
    if (rsqrt == nullptr) continue;
    const ir::Node* add =
        chain_producer(g, delegated, rsqrt->arg("self").tensor(), ops::aten::add_Tensor);
    if (add == nullptr)
      add = chain_producer(g, delegated, rsqrt->arg("self").tensor(), ops::aten::add_Scalar);
    if (add == nullptr || add->args.size() < 2) continue;
    if (add->args.size() > 2 && constant_scalar(g, add->arg("alpha")).value_or(0) != 1)
      continue;  // alpha
    const std::optional<double> eps = constant_scalar(g, add->arg("other"));
    if (!eps) continue;
    const ir::Node* mean =
        chain_producer(g, delegated, add->arg("self").tensor(), ops::aten::mean_dim);
    if (mean == nullptr || mean->args.size() < 3 ||
        mean->arg("dim").kind() != ir::ArgKind::IntList ||
        mean->arg("keepdim").kind() != ir::ArgKind::Bool || !mean->arg("keepdim").get<bool>() ||
        (mean->args.size() > 3 && !mean->arg("dtype").is_none())) {
      continue;
    }
    const auto& dims = mean->arg("dim").get<std::vector<int64_t>>();
    const int64_t last = static_cast<int64_t>(xs.rank()) - 1;
    if (dims.size() != 1 || (dims[0] != -1 && dims[0] != last)) continue;
    const ir::Node* pow =
        chain_producer(g, delegated, mean->arg("self").tensor(), ops::aten::pow_Tensor_Scalar);
    if (pow == nullptr || pow->arg("self").tensor() != x || pow->args.size() < 2 ||
        constant_scalar(g, pow->arg("exponent")).value_or(0) != 2) {
      continue;
    }
    if (g.value(mul.outputs[0]).spec != xs) continue;
    return Match{x, *eps, {rsqrt->id, add->id, mean->id, pow->id}};
  }
  return std::nullopt;
}

}  // namespace

const ir::OpSchema& rms_norm_schema() {
  static const ir::OpSchema& functional = register_single_output_op(
      "pteron::rms_norm", {{"x", "Tensor"}, {"weight", "Tensor?"}, {"eps", "float"}});
  return functional;
}

int fuse_rms_norm(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id) || !is_tensor_mul(graph.node(id))) continue;
    const std::optional<Match> m = match_norm(graph, delegated, graph.node(id));
    if (!m) continue;
    // The weight: the normalised value's only reader multiplies it by a [D] tensor.
    const ir::Value& normed = graph.value(graph.node(id).outputs[0]);
    const ir::TensorSpec& xs = graph.value(m->x).spec;
    ir::NodeId target = id;
    ir::Argument weight = ir::Argument(ir::None{});
    if (const std::optional<SoleProduct> p = sole_product(graph, delegated, normed.id)) {
      const ir::TensorSpec& ws = graph.value(p->other).spec;
      if (ws.dtype == ScalarType::Float && ws.rank() == 1 && !ws.is_dynamic() &&
          ws.sizes[0] == xs.sizes.back() && !xs.is_dynamic() &&
          graph.value(graph.node(p->mul).outputs[0]).spec == xs) {
        target = p->mul;
        weight = ir::Argument(ir::TensorRef{p->other});
      }
    }
    graph.set_op(target, rms_norm_schema(),
                 {ir::Argument(ir::TensorRef{m->x}), weight, ir::Argument(m->eps)});
    if (target != id) graph.remove_node(id);
    for (ir::NodeId n : m->chain) graph.remove_node(n);
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
