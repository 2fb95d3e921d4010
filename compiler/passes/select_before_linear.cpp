#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// When `v` is view(linear(x, W, b)) splitting the linear's rows into leading dims (or the
// linear itself), returns the linear node; else kNoNode.
ir::NodeId viewed_linear(const ir::Graph& g, ir::ValueId v, ir::ValueId* linear_out) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return ir::kNoNode;
  ir::NodeId id = value.producer;
  *linear_out = v;
  const ir::Node* n = &g.node(id);
  if (n->is(ops::aten::view)) {
    const ir::Value& in = g.value(n->arg("self").tensor());
    if (!in.is_intermediate()) return ir::kNoNode;
    *linear_out = in.id;
    id = in.producer;
    n = &g.node(id);
  }
  if (!n->is(ops::aten::linear)) return ir::kNoNode;
  const ir::TensorSpec& lin = g.value(*linear_out).spec;
  // The view must keep the feature dim last and only regroup the rows, and nothing else may
  // need the linear's full result (it would then be computed twice).
  if (lin.rank() < 1 || value.spec.rank() < 1 || lin.sizes.back() != value.spec.sizes.back() ||
      !single_use_intermediate(g, g.value(*linear_out))) {
    return ir::kNoNode;
  }
  return id;
}

}  // namespace

int select_before_linear(ir::Graph& graph) {
  const ir::OpSchemaRegistry& schemas = ir::OpSchemaRegistry::global();
  const ir::OpSchema* select = schemas.find(ops::aten::select_int);
  const ir::OpSchema* view = schemas.find(ops::aten::view);
  const ir::OpSchema* linear = schemas.find(ops::aten::linear);
  if (select == nullptr || view == nullptr || linear == nullptr) return 0;
  int rewritten = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id)) continue;
    if (graph.is_dynamic_node(id)) continue;  // sizes are upper bounds, not exact
    const ir::Node& sel = graph.node(id);
    const std::optional<RowSelection> selection = one_row_selection(graph, sel);
    if (!selection) continue;
    const ir::ValueId src = sel.arg("self").tensor();
    if (!single_use_intermediate(graph, graph.value(src))) continue;
    const int64_t size = selection->rows, index = selection->index;
    ir::ValueId linear_out = ir::kNoValue;
    const ir::NodeId lin_id = viewed_linear(graph, src, &linear_out);
    if (lin_id == ir::kNoNode) continue;
    const ir::Node& lin = graph.node(lin_id);
    const ir::ValueId x = lin.arg("input").tensor();
    const ir::TensorSpec& xs = graph.value(x).spec;
    // x's rows (all dims but the last, flattened) line up with the linear output's rows.
    if (xs.rank() != 2 || xs.sizes[0] != size) continue;
    const ir::ValueId out = sel.outputs[0];
    const ir::TensorSpec out_spec = graph.value(out).spec;
    const int64_t k = xs.sizes[1], n = out_spec.sizes.back();
    const ir::DebugHandle debug = sel.debug;
    const std::vector<ir::Argument> lin_args = lin.args;
    const ir::ValueId row =
        graph
            .node(graph.add_node(
                *select, {ir::TensorRef{x}, int64_t{0}, index},
                {ir::NewValue{graph.unique_name("row"), ir::TensorSpec::contiguous(xs.dtype, {k})}},
                debug, id))
            .outputs[0];
    const ir::ValueId logits =
        graph
            .node(graph.add_node(*linear, {ir::TensorRef{row}, lin_args[1], lin_args[2]},
                                 {ir::NewValue{graph.unique_name("row_linear"),
                                               ir::TensorSpec::contiguous(out_spec.dtype, {n})}},
                                 debug, id))
            .outputs[0];
    const ir::ValueId shaped =
        graph
            .node(graph.add_node(*view, {ir::TensorRef{logits}, out_spec.sizes},
                                 {ir::NewValue{graph.unique_name("row_view"), out_spec}}, debug,
                                 id))
            .outputs[0];
    graph.replace_all_uses(out, shaped);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace pteron::compiler
