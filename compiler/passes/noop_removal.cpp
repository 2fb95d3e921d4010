#include <algorithm>
#include <numeric>
#include <string>

#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// True when `node` passes its first tensor argument through unchanged.
bool is_noop(const ir::Graph& g, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.args.empty() || !node.args[0].is_tensor()) return false;
  const ir::TensorSpec& in = g.value(node.args[0].tensor()).spec;
  const ir::TensorSpec& out = g.value(node.outputs[0]).spec;
  if (ir::any_overload_of(node, {ops::aten::alias, ops::aten::detach, ops::aten::lift_fresh_copy}))
    return true;
  if (in != out) return false;
  // Dynamic tensors: equal specs mean equal symbolic sizes only when the frontend recorded them.
  if (!in.has_sym_sizes()) return false;
  // With equal specs these ops keep every element where it was.
  if (ir::any_overload_of(
          node, {ops::aten::clone, ops::aten::_to_copy, ops::aten::view, ops::aten::expand,
                 ops::aten::slice_Tensor, ops::dim_order_ops::_to_dim_order_copy,
                 ops::dim_order_ops::_clone_dim_order})) {
    return true;
  }
  if (ir::any_overload_of(node, {ops::aten::permute})) {
    const auto& dims = node.arg("dims").get<std::vector<int64_t>>();
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] != static_cast<int64_t>(i) &&
          dims[i] != static_cast<int64_t>(i) - static_cast<int64_t>(dims.size()))
        return false;
    }
    return true;
  }
  return false;
}

}  // namespace

int remove_noops(ir::Graph& graph) {
  int removed = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    const ir::Node& node = graph.node(id);
    if (!is_noop(graph, node)) continue;
    const ir::ValueId in = node.args[0].tensor();
    const ir::ValueId out = node.outputs[0];
    if (graph.is_output(out)) continue;  // outputs keep memory of their own
    if (graph.value(in).spec != graph.value(out).spec) continue;  // alias with a shape change
    graph.replace_all_uses(out, in);
    graph.remove_node(id);
    ++removed;
  }
  return removed;
}

int simplify_views(ir::Graph& graph) {
  int changed = 0;
  // Shape-free rewrites (the outer op's arguments and output stay), so dynamic nodes too.
  for (ir::NodeId id : graph.nodes()) {
    const ir::Node& node = graph.node(id);
    if (node.args.empty() || !node.args[0].is_tensor()) continue;
    const ir::Value& src = graph.value(node.args[0].tensor());
    if (!src.is_intermediate()) continue;
    const ir::Node& producer = graph.node(src.producer);
    const std::string op = node.op.str(), inner = producer.op.str();
    if (op == ops::aten::view && inner == ops::aten::view) {
      // view(view(x, a), b) == view(x, b)
      graph.set_arg(id, 0, producer.args[0]);
      ++changed;
    } else if (op == ops::aten::permute && inner == ops::aten::permute) {
      // permute(permute(x, p), q)[i] == x[p[q[i]]]
      const auto& p = producer.arg("dims").get<std::vector<int64_t>>();
      const auto& q = node.arg("dims").get<std::vector<int64_t>>();
      const int64_t rank = static_cast<int64_t>(p.size());
      std::vector<int64_t> combined(q.size());
      for (size_t i = 0; i < q.size(); ++i) {
        const int64_t qi = (q[i] + rank) % rank;
        combined[i] = (p[static_cast<size_t>(qi)] + rank) % rank;
      }
      ir::Argument source = producer.args[0];
      graph.set_args(id, {source, ir::Argument(combined)});
      ++changed;
    }
  }
  return changed;
}

}  // namespace pteron::compiler
