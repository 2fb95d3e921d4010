#include <set>
#include <string>

#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

// A constant, or data moved out of constants (split, slice, select, views, clone): what
// fold_constants, which runs after this pass, makes a constant. nn.MultiheadAttention splits its
// in_proj_weight into the q, k and v weights so (cross-attention: a query other than the key).
bool folds_to_constant(const ir::Graph& g, const ir::Value& v, int depth = 0) {
  if (v.is_constant()) return true;
  if (!v.is_intermediate() || depth > 4) return false;
  const ir::Node& p = g.node(v.producer);
  static const std::set<std::string, std::less<>> kMoves = {
      "split_with_sizes", "split",     "slice",   "select", "view",  "reshape",     "permute", "t",
      "transpose",        "unsqueeze", "squeeze", "clone",  "alias", "_unsafe_view"};
  if (p.op.ns != "aten" || kMoves.count(p.op.name) == 0) return false;
  for (ir::ValueId in : p.inputs())
    if (!folds_to_constant(g, g.value(in), depth + 1)) return false;
  return true;
}

// A weight known at compile time: a constant (or folded into one later), or a dequantize of a
// constant (quantized graphs keep int8 weights behind dequantize nodes, which constant folding
// leaves alone).
bool is_compile_time_weight(const ir::Graph& g, const ir::Value& w) {
  if (folds_to_constant(g, w)) return true;
  if (!w.is_intermediate()) return false;
  const ir::Node& p = g.node(w.producer);
  const bool dequantize =
      (p.op.ns == "quantized_decomposed" && p.op.name.rfind("dequantize_per_", 0) == 0) ||
      p.is(ops::torchao::dequantize_affine);
  return dequantize && g.value(p.arg("input").tensor()).is_constant();
}

// The weight W when `v` is permute(W, [1, 0]) of a 2-D compile-time weight, else kNoValue.
ir::ValueId transposed_constant(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return ir::kNoValue;
  const ir::Node& p = g.node(value.producer);
  if (!p.is(ops::aten::permute)) return ir::kNoValue;
  const auto& dims = p.arg("dims").get<std::vector<int64_t>>();
  if (dims.size() != 2 || (dims[0] != 1 && dims[0] != -1)) return ir::kNoValue;
  const ir::Value& w = g.value(p.arg("self").tensor());
  return is_compile_time_weight(g, w) && w.spec.rank() == 2 && w.spec.is_contiguous()
             ? w.id
             : ir::kNoValue;
}

// The weight W when `v` is expand(permute(W, [1, 0]), [B, K, N]): a 2-D compile-time weight
// broadcast over a batch, as torch's matmul decomposes x @ W^T for an x it cannot flatten
// (nn.MultiheadAttention's in-projection with batch_first, any linear of a transposed input);
// else kNoValue.
ir::ValueId batch_broadcast_constant(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return ir::kNoValue;
  const ir::Node& p = g.node(value.producer);
  if (!p.is(ops::aten::expand)) return ir::kNoValue;
  const ir::ValueId w = transposed_constant(g, p.arg("self").tensor());
  if (w == ir::kNoValue) return ir::kNoValue;
  const auto& kn = g.value(p.arg("self").tensor()).spec.sizes;
  const auto& bkn = value.spec.sizes;
  return bkn.size() == 3 && bkn[1] == kn[0] && bkn[2] == kn[1] ? w : ir::kNoValue;
}

bool is_one(const ir::Argument& a) {
  return a.is<ir::Scalar>() ? a.get<ir::Scalar>().to_double() == 1.0 : a.to_double() == 1.0;
}

}  // namespace

int fuse_linear(ir::Graph& graph) {
  const ir::OpSchema* linear = ir::OpSchemaRegistry::global().find(ops::aten::linear);
  if (linear == nullptr) return 0;
  int fused = 0;
  for (ir::NodeId id : graph.nodes()) {
    const ir::Node& node = graph.node(id);
    const std::string op = node.op.str();
    if (op == ops::aten::addmm) {
      // addmm(bias, x, W^T, beta=1, alpha=1) == linear(x, W, bias) for a 1-D bias of W's rows.
      const ir::ValueId w = transposed_constant(graph, node.arg("mat2").tensor());
      if (w == ir::kNoValue || !is_one(node.arg("beta")) || !is_one(node.arg("alpha"))) continue;
      const ir::TensorSpec& bias = graph.value(node.arg("self").tensor()).spec;
      if (bias.rank() != 1 || bias.sizes[0] != graph.value(w).spec.sizes[0]) continue;
      graph.set_op(id, *linear, {node.arg("mat1"), ir::TensorRef{w}, node.arg("self")});
      ++fused;
    } else if (op == ops::aten::mm) {
      const ir::ValueId w = transposed_constant(graph, node.arg("mat2").tensor());
      if (w == ir::kNoValue) continue;
      graph.set_op(id, *linear, {node.arg("self"), ir::TensorRef{w}, ir::None{}});
      ++fused;
    } else if (op == ops::aten::bmm) {
      // bmm(x [B, M, K], expand(W^T)) == linear(x, W): the weight is read once, not copied B
      // times into a [B, K, N] tensor first.
      const ir::ValueId w = batch_broadcast_constant(graph, node.arg("mat2").tensor());
      if (w == ir::kNoValue) continue;
      graph.set_op(id, *linear, {node.arg("self"), ir::TensorRef{w}, ir::None{}});
      ++fused;
    }
  }
  return fused;
}

}  // namespace pteron::compiler
