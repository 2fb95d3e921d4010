// select_rows_early: moves a one-row selection up through the row-wise ops that produce it.
//
// A "row" of a tensor is one index of its leading dims flattened (all dims but the last, which
// holds the features). An op is row-wise in an operand when row i of its output depends only on
// row i of that operand (plus operands that are the same for every row):
//   view            keeping the last dim: regrouping leading dims keeps the flattened row order;
//   native_layer_norm over the last dim only: each row is normalised by its own mean/variance;
//   linear          y_i = x_i W^T + b;
//   relu, gelu, silu, sigmoid, tanh: elementwise;
//   add, sub, mul, div: elementwise, where each other operand is either shaped like the output
//                   (then row-wise too) or the same for every row (all dims but the last are 1).
// So for one row r: row_r(op(x)) == op(row_r(x)), exactly (the same arithmetic on the same
// values; only the GEMM's blocking can change the summation order, i.e. rounding). After a
// causal LM's last attention every op up to the logits is row-wise, so the last layer's
// out-projection, residual adds, layer norms and FFN need only the last token's row: the pass
// rewrites that chain to run on [1, F] rows and leaves the full-size nodes to dead-code removal.
// It only moves the selection above values whose every use is on that row path (a value also
// needed in full, e.g. the input of the attention, is computed in full and one row of it taken).
#include <unordered_map>

#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

using ir::Graph;
using ir::Node;
using ir::TensorSpec;
using ir::ValueId;

bool leading_rows(const TensorSpec& s, int64_t* rows) {
  if (s.rank() < 1) return false;
  int64_t r = 1;
  for (size_t d = 0; d + 1 < s.rank(); ++d) r *= s.sizes[d];
  *rows = r;
  return true;
}

// Same for every row of an output shaped `out`: broadcasts to it without varying along any
// leading dim (a scalar, a feature vector, [1, 1, F], ...).
bool row_invariant(const TensorSpec& s, const TensorSpec& out) {
  if (s.rank() > out.rank()) return false;
  for (size_t d = 0; d + 1 < s.rank(); ++d)
    if (s.sizes[d] != 1) return false;
  return s.rank() == 0 || s.sizes.back() == 1 || s.sizes.back() == out.sizes.back();
}

bool is_unary_rowwise(const std::string& op) {
  return op == ops::aten::relu || op == ops::aten::gelu || op == ops::aten::silu ||
         op == ops::aten::sigmoid || op == ops::aten::tanh;
}

bool is_binary_rowwise(const std::string& op) {
  return op == ops::aten::add_Tensor || op == ops::aten::sub_Tensor ||
         op == ops::aten::mul_Tensor || op == ops::aten::div_Tensor;
}

// The argument positions of `n` that are row operands (see the file comment); empty when `n` is
// not row-wise. Only output 0 may be used (layer norm's mean and rstd must be dead).
std::vector<size_t> row_operands(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return {};
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!is_unused(g, n.outputs[i])) return {};
  const TensorSpec& out = g.value(n.outputs[0]).spec;
  int64_t out_rows = 0, in_rows = 0;
  if (!leading_rows(out, &out_rows) || n.args.empty() || !n.args[0].is_tensor()) return {};
  const TensorSpec& in = g.value(n.args[0].tensor()).spec;
  const std::string op = n.op.str();
  const bool same_rows = leading_rows(in, &in_rows) && in_rows == out_rows;
  if (op == ops::aten::view) {
    return same_rows && in.sizes.back() == out.sizes.back() ? std::vector<size_t>{0}
                                                            : std::vector<size_t>{};
  }
  if (op == ops::aten::native_layer_norm) {
    const auto& shape = n.arg("normalized_shape").get<std::vector<int64_t>>();
    return same_rows && shape.size() == 1 && shape[0] == in.sizes.back() ? std::vector<size_t>{0}
                                                                         : std::vector<size_t>{};
  }
  if (op == ops::aten::linear) return same_rows ? std::vector<size_t>{0} : std::vector<size_t>{};
  if (is_unary_rowwise(op)) return in == out ? std::vector<size_t>{0} : std::vector<size_t>{};
  if (is_binary_rowwise(op)) {
    std::vector<size_t> rows;
    for (size_t i = 0; i < 2 && i < n.args.size(); ++i) {
      if (!n.args[i].is_tensor()) continue;  // a Scalar other
      const TensorSpec& s = g.value(n.args[i].tensor()).spec;
      if (s.sizes == out.sizes) {
        rows.push_back(i);
      } else if (!row_invariant(s, out)) {
        return {};
      }
    }
    return rows;
  }
  return {};
}

bool contains(const std::vector<size_t>& v, size_t x) {
  for (size_t e : v)
    if (e == x) return true;
  return false;
}

class RowRewriter {
 public:
  RowRewriter(Graph& g, ir::NodeId root, int64_t rows, int64_t index)
      : g_(g), root_(root), rows_(rows), index_(index), debug_(g.node(root).debug) {}

  // Returns how many full-size nodes now have a one-row twin (0: nothing worth doing).
  int run() {
    const ValueId src = g_.node(root_).arg("self").tensor();
    mark_row_only();
    if (!row_only_[src]) return 0;
    int pushed = 0;
    for (const auto& [v, only] : row_only_) {
      const ir::Value& value = g_.value(v);
      if (!value.is_intermediate()) continue;
      const Node& p = g_.node(value.producer);
      if (only && !p.is(ops::aten::view) && !row_operands(g_, p).empty()) ++pushed;
    }
    if (pushed == 0) return 0;
    const ValueId row = row_of(src);
    const TensorSpec out = g_.value(g_.node(root_).outputs[0]).spec;
    const ValueId shaped = out.sizes == g_.value(row).spec.sizes ? row : view(row, out.sizes);
    g_.replace_all_uses(g_.node(root_).outputs[0], shaped);
    return pushed;
  }

 private:
  // row_only_[v]: only row `index_` of v is ever read (every use is the root selection or a
  // row operand of a row-wise node whose result is itself row-only).
  void mark_row_only() {
    const std::vector<ir::NodeId>& order = g_.nodes();
    size_t pos = 0;
    while (order[pos] != root_) ++pos;
    for (size_t i = pos + 1; i-- > 0;) {
      const Node& n = g_.node(order[i]);
      if (n.id == root_) continue;
      for (ValueId v : n.outputs)
        if (v != ir::kNoValue) row_only_[v] = is_row_only(v);
    }
    // The root's own source, decided after its producers' outputs were visited: visit it too.
    const ValueId src = g_.node(root_).arg("self").tensor();
    if (!row_only_.count(src)) row_only_[src] = false;
  }

  bool is_row_only(ValueId v) const {
    const ir::Value& value = g_.value(v);
    int64_t rows = 0;
    if (!value.is_intermediate() || !leading_rows(value.spec, &rows) || rows != rows_) return false;
    if (value.users.empty() || g_.is_output(v)) return false;
    for (ir::NodeId u : value.users) {
      if (u == root_) continue;
      const Node& user = g_.node(u);
      const std::vector<size_t> ops = row_operands(g_, user);
      if (ops.empty()) return false;
      auto it = row_only_.find(user.outputs[0]);
      if (it == row_only_.end() || !it->second) return false;
      for (size_t i = 0; i < user.args.size(); ++i) {
        bool uses = false;
        user.args[i].for_each_value([&](ValueId x) { uses |= x == v; });
        if (uses && !contains(ops, i)) return false;  // read in full (e.g. as a weight)
      }
    }
    return true;
  }

  // Adds a node before the root; `debug` is the full-size node it replaces (the profiler then
  // still charges the row's work to that module), else the root's.
  ValueId add(std::string_view op, std::vector<ir::Argument> args, std::vector<TensorSpec> outs,
              const std::string& base, const ir::DebugHandle* debug = nullptr) {
    const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(op);
    std::vector<std::optional<ir::NewValue>> news;
    for (size_t i = 0; i < outs.size(); ++i) {  // names are taken only once the node exists
      const std::string name = i == 0 ? base : base + "_stat" + std::to_string(i);
      news.push_back(ir::NewValue{g_.unique_name(name), std::move(outs[i])});
    }
    const ir::NodeId id =
        g_.add_node(*schema, std::move(args), std::move(news), debug ? *debug : debug_, root_);
    return g_.node(id).outputs[0];
  }

  ValueId view(ValueId v, std::vector<int64_t> sizes) {
    TensorSpec spec = TensorSpec::contiguous(g_.value(v).spec.dtype, sizes);
    return add(ops::aten::view, {ir::TensorRef{v}, sizes}, {spec}, "row_view");
  }

  // Row index_ of a value computed in full, as [1, F].
  ValueId extract(ValueId v) {
    const TensorSpec s = g_.value(v).spec;
    const int64_t f = s.sizes.back();
    // The leading dim holding the rows when the others are 1; else flatten first.
    int64_t dim = -1, ones = 0;
    for (size_t d = 0; d + 1 < s.rank(); ++d) {
      if (s.sizes[d] == 1) {
        ++ones;
      } else {
        dim = static_cast<int64_t>(d);
      }
    }
    ValueId base = v;
    std::vector<int64_t> sliced = s.sizes;
    if (s.rank() < 2 || ones + 2 != static_cast<int64_t>(s.rank())) {
      base = view(v, {rows_, f});
      dim = 0;
      sliced = {rows_, f};
    }
    sliced[dim] = 1;
    const ValueId row =
        add(ops::aten::slice_Tensor, {ir::TensorRef{base}, dim, index_, index_ + 1, int64_t{1}},
            {TensorSpec::contiguous(s.dtype, sliced)}, "row_slice");
    return sliced.size() == 2 ? row : view(row, {1, f});
  }

  // An operand that is the same for every row, shaped so it broadcasts against [1, F] to [1, F].
  ValueId invariant(ValueId v) {
    const TensorSpec& s = g_.value(v).spec;
    if (s.rank() <= 2) return v;
    return view(v, {s.sizes.back()});
  }

  ValueId row_of(ValueId v) {
    auto memo = rows_of_.find(v);
    if (memo != rows_of_.end()) return memo->second;
    ValueId row = ir::kNoValue;
    auto only = row_only_.find(v);
    const Node* p = g_.value(v).is_intermediate() ? &g_.node(g_.value(v).producer) : nullptr;
    const std::vector<size_t> ops = p != nullptr ? row_operands(g_, *p) : std::vector<size_t>{};
    if (only == row_only_.end() || !only->second || ops.empty()) {
      row = extract(v);
    } else if (p->is(ops::aten::view)) {
      row = row_of(p->arg("self").tensor());
    } else {
      // Copies: adding nodes below may move the graph's node storage under `p`.
      const std::vector<ir::Argument> old_args = p->args;
      const std::string op = p->op.str();
      const std::vector<ValueId> old_outputs = p->outputs;
      const ir::DebugHandle debug = p->debug;
      const ir::ScalarType dtype = g_.value(v).spec.dtype;
      const int64_t f = g_.value(v).spec.sizes.back();
      std::vector<ir::Argument> args = old_args;
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].is_tensor()) continue;
        args[i] =
            ir::TensorRef{contains(ops, i) ? row_of(args[i].tensor())
                                           : (is_binary_rowwise(op) ? invariant(args[i].tensor())
                                                                    : args[i].tensor())};
      }
      std::vector<TensorSpec> outs = {TensorSpec::contiguous(dtype, {1, f})};
      if (op == ops::aten::native_layer_norm) {
        const ir::ScalarType stat = g_.value(old_outputs[1]).spec.dtype;
        outs.push_back(TensorSpec::contiguous(stat, {1, 1}));
        outs.push_back(TensorSpec::contiguous(stat, {1, 1}));
      }
      row = add(op, std::move(args), std::move(outs), g_.value(v).name + "_row", &debug);
    }
    rows_of_[v] = row;
    return row;
  }

  Graph& g_;
  ir::NodeId root_;
  int64_t rows_, index_;
  ir::DebugHandle debug_;
  std::unordered_map<ValueId, bool> row_only_;
  std::unordered_map<ValueId, ValueId> rows_of_;
};

}  // namespace

int select_rows_early(ir::Graph& graph) {
  // Nodes earlier passes left dead (e.g. select_before_linear's full-size linear) would count as
  // uses of the full values.
  remove_dead_code(graph);
  int rewritten = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id)) continue;
    if (graph.is_dynamic_node(id)) continue;  // sizes are upper bounds, not exact
    const std::optional<RowSelection> selection = one_row_selection(graph, graph.node(id));
    if (!selection) continue;
    rewritten += RowRewriter(graph, id, selection->rows, selection->index).run();
  }
  return rewritten;
}

}  // namespace pteron::compiler
