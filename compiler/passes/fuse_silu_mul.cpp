#include "compiler/passes/fuse_silu_mul.h"

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

bool float_contiguous(const ir::TensorSpec& s) {
  return s.dtype == ScalarType::Float && s.is_contiguous();
}

// x when `mul` is mul(x, sigmoid(x)) or mul(sigmoid(x), x) with a single-use sigmoid.
ir::ValueId silu_input(const ir::Graph& g, const std::unordered_set<ir::NodeId>& delegated,
                       const ir::Node& mul, ir::NodeId* sigmoid) {
  for (int k = 0; k < 2; ++k) {
    const ir::Value& s = g.value(mul.args[k].tensor());
    const ir::ValueId x = mul.args[1 - k].tensor();
    if (!single_use_intermediate(g, s) || delegated.count(s.producer)) continue;
    const ir::Node& sig = g.node(s.producer);
    if (!sig.is(ops::aten::sigmoid) || sig.args.empty() || !sig.arg("self").is_tensor() ||
        sig.arg("self").tensor() != x) {
      continue;
    }
    *sigmoid = sig.id;
    return x;
  }
  return ir::kNoValue;
}

}  // namespace

const ir::OpSchema& silu_mul_schema() {
  static const ir::OpSchema& functional =
      register_single_output_op("pteron::silu_mul", {{"x", "Tensor"}, {"other", "Tensor?"}});
  return functional;
}

int fuse_silu_mul(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id) || delegated.count(id)) continue;
    const ir::Node& mul = graph.node(id);
    if (!is_tensor_mul(mul)) continue;
    ir::NodeId sigmoid = ir::kNoNode;
    const ir::ValueId x = silu_input(graph, delegated, mul, &sigmoid);
    if (x == ir::kNoValue) continue;
    const ir::Value& product = graph.value(mul.outputs[0]);
    if (!float_contiguous(graph.value(x).spec) || product.spec != graph.value(x).spec) continue;
    // The gate: the SiLU's only reader multiplies it by a same-shape tensor.
    ir::NodeId gate = ir::kNoNode;
    ir::ValueId other = ir::kNoValue;
    if (const std::optional<SoleProduct> p = sole_product(graph, delegated, product.id)) {
      if (graph.value(p->other).spec == product.spec &&
          graph.value(graph.node(p->mul).outputs[0]).spec == product.spec) {
        gate = p->mul;
        other = p->other;
      }
    }
    const ir::Argument other_arg =
        other == ir::kNoValue ? ir::Argument(ir::None{}) : ir::Argument(ir::TensorRef{other});
    if (gate == ir::kNoNode) {
      graph.set_op(id, silu_mul_schema(), {ir::Argument(ir::TensorRef{x}), other_arg});
    } else {
      // The gate node computes the whole product; the SiLU's mul goes.
      graph.set_op(gate, silu_mul_schema(), {ir::Argument(ir::TensorRef{x}), other_arg});
      graph.remove_node(id);
    }
    graph.remove_node(sigmoid);
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
