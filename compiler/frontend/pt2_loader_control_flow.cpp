// Control flow: export's higher-order cond, while_loop, scan and map_impl nodes, read as
// pteron::cond, pteron::while_loop and pteron::scan nodes whose subgraphs are branches of the
// graph (ir::Graph::branch), each read by the same loader as the model's own graph. The program
// emitter writes them as ExecuTorch's JumpFalse instructions around the subgraphs' instructions.
#include "compiler/frontend/pt2_loader_class.h"

namespace pteron::compiler::frontend::detail {
namespace {

const ir::OpSchema& schema_of(ir::OpName op) {
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(op);
  if (schema == nullptr)
    throw CompileError(ir::OpRef::of(op).str() + " is not in the operator table");
  return *schema;
}

// Whether every dimension of `spec` after the first is static: a scan's rows have one shape.
bool static_rows(const ir::TensorSpec& spec) {
  for (size_t d = 1; d < spec.rank(); ++d) {
    if (spec.sym_size(d) != nullptr || (spec.is_dynamic() && spec.min_sizes[d] != spec.sizes[d]))
      return false;
  }
  return true;
}

}  // namespace

std::vector<ir::ValueId> Loader::tensor_list_arg(const Json& input, const std::string& what,
                                                 const std::string& name) {
  auto [kind, list] = union_member(member(input, "arg", what), what + ": " + name);
  if (kind != "as_tensors")
    throw CompileError(what + ": " + name + " of kind " + kind +
                       " are not supported (pteron's control flow takes tensors)");
  std::vector<ir::ValueId> out;
  for (const Json& t : *list)
    out.push_back(lookup(json_string(member(t, "name", what), what), what));
  return out;
}

std::vector<ir::NewValue> Loader::tensor_outputs(const Json& node, size_t count,
                                                 const std::string& what) {
  const Json& outs = member(node, "outputs", what);
  if (!outs.is_array() || outs.size() != count)
    throw CompileError(what + ": the node's outputs do not match its subgraph's");
  std::vector<ir::NewValue> out;
  for (const Json& o : outs) {
    auto [kind, t] = union_member(o, what + " output");
    if (kind != "as_tensor") throw CompileError(what + ": an output of kind " + kind);
    const std::string name = json_string(member(*t, "name", what), what);
    out.push_back(ir::NewValue{name, spec_of(name)});
  }
  return out;
}

std::vector<ir::ValueId> Loader::non_constant(const std::vector<ir::ValueId>& values) const {
  std::vector<ir::ValueId> out;
  for (ir::ValueId v : values) {
    if (!graph_.value(v).is_constant()) out.push_back(v);
  }
  return out;
}

void Loader::read_cond(const Json& node, const ir::DebugHandle& debug, const std::string& what) {
  const Json& inputs = member(node, "inputs", what);
  if (!inputs.is_array() || inputs.size() != 4)
    throw CompileError(what + ": torch.cond takes a predicate, two branches and their operands");
  const ir::ValueId pred = cond_predicate(member(inputs[0], "arg", what), debug, what);
  const std::vector<ir::ValueId> operands = tensor_list_arg(inputs[3], what, "torch.cond operands");
  const std::vector<SubgraphInput> branch_inputs = subgraph_inputs(operands, true);
  ir::Graph true_branch = read_branch(member(inputs[1], "arg", what), branch_inputs, what);
  ir::Graph false_branch = read_branch(member(inputs[2], "arg", what), branch_inputs, what);
  if (true_branch.outputs().size() != false_branch.outputs().size())
    throw CompileError(what + ": the branches return different numbers of tensors");
  // Operands that are constants of the model are constants of each branch; the node passes the
  // rest, in the order they are the branches' inputs.
  std::vector<std::optional<ir::NewValue>> outputs;
  const std::vector<ir::NewValue> outs = tensor_outputs(node, true_branch.outputs().size(), what);
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::TensorSpec& spec = outs[i].spec;
    for (const ir::Graph* branch : {&true_branch, &false_branch}) {
      const ir::TensorSpec& out = branch->value(branch->outputs()[i]).spec;
      if (out.dtype != spec.dtype || out.sizes != spec.sizes) {
        throw CompileError(what + ": output " + std::to_string(i) + " is " + ir::to_string(spec) +
                           " but a branch returns " + ir::to_string(out));
      }
    }
    outputs.push_back(outs[i]);
  }
  const int64_t t = static_cast<int64_t>(graph_.add_branch(std::move(true_branch)));
  const int64_t f = static_cast<int64_t>(graph_.add_branch(std::move(false_branch)));
  std::vector<ir::Argument> args = {ir::Argument(ir::TensorRef{pred}),
                                    ir::Argument(ir::TensorList{non_constant(operands)}),
                                    ir::Argument(t), ir::Argument(f)};
  graph_.add_node(schema_of(ops::pteron::cond), std::move(args), std::move(outputs), debug);
}

ir::ValueId Loader::cond_predicate(const Json& arg, const ir::DebugHandle& debug,
                                   const std::string& what) {
  auto [kind, v] = union_member(arg, what + ": predicate");
  // A node computing the predicate as a bool tensor of `sizes` (one element).
  auto add = [&](const ir::OpSchema& schema, std::vector<ir::Argument> args,
                 std::vector<int64_t> sizes) {
    const ir::NodeId n = graph_.add_node(
        schema, std::move(args),
        {ir::NewValue{graph_.unique_name(debug.node_name + "_pred"),
                      ir::TensorSpec::contiguous(ir::ScalarType::Bool, std::move(sizes))}},
        debug);
    return graph_.node(n).outputs[0];
  };
  // torch takes a nonzero number as true; ExecuTorch's JumpFalse reads a bool tensor.
  auto nonzero = [&](ir::ValueId pred) {
    const ir::TensorSpec& spec = graph_.value(pred).spec;
    if (spec.dtype == ir::ScalarType::Bool) return pred;
    return add(schema_of(ops::aten::ne_Scalar),
               {ir::Argument(ir::TensorRef{pred}), ir::Argument(ir::Scalar{int64_t{0}})},
               spec.sizes);
  };
  if (kind == "as_tensor") {
    const ir::ValueId pred = lookup(json_string(member(*v, "name", what), what), what);
    const ir::TensorSpec& spec = graph_.value(pred).spec;
    if (spec.is_dynamic() || spec.numel() != 1)
      throw CompileError(what + ": torch.cond's predicate must have one element, not " +
                         ir::to_string(spec));
    return nonzero(pred);
  }
  if (kind != "as_sym_bool") throw CompileError(what + ": torch.cond predicate of kind " + kind);
  auto [sym_kind, sym] = union_member(*v, what + ": predicate");
  if (sym_kind == "as_bool") {
    return wrap_scalar(ir::Scalar{json_bool(*sym, what)}, ir::ScalarType::Float, debug.node_name,
                       "pred");
  }
  const std::string name = json_string(*sym, what);
  if (lifted_scalars_.defined_by.count(name)) return nonzero(lifted_scalar(name, debug, what));
  auto guard = size_guards_.find(name);
  if (guard == size_guards_.end())
    throw_symbolic(what, "predicate '" + name + "' (pteron reads comparisons of sizes)");
  // The comparison of the sizes as tensors, computed by the program each call.
  const SizeGuard& g = guard->second;
  const ir::ValueId lhs = wrap_sym_int(g.lhs, debug, "pred_lhs");
  const ir::ValueId rhs = wrap_sym_int(g.rhs, debug, "pred_rhs");
  const std::string op = "aten::" + g.cmp + ".Tensor";
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(ir::OpRef::parse(op));
  if (schema == nullptr) throw CompileError(op + " is not in the operator table");
  return add(*schema, {ir::Argument(ir::TensorRef{lhs}), ir::Argument(ir::TensorRef{rhs})}, {});
}

std::vector<Loader::SubgraphInput> Loader::subgraph_inputs(const std::vector<ir::ValueId>& values,
                                                           bool constants) const {
  std::vector<SubgraphInput> out;
  for (ir::ValueId v : values) {
    const ir::Value& value = graph_.value(v);
    out.push_back({value.spec, constants && value.is_constant() ? &*value.constant : nullptr});
  }
  return out;
}

ir::Graph Loader::read_branch(const Json& arg, const std::vector<SubgraphInput>& operands,
                              const std::string& what) {
  auto [kind, branch] = union_member(arg, what + ": subgraph");
  if (kind != "as_graph") throw CompileError(what + ": a control-flow subgraph of kind " + kind);
  const std::string name = json_string(member(*branch, "name", what), what);
  const Json& graph = member(*branch, "graph", what);
  // The branch is read as a graph of its own, by the same loader; the model's graph and the
  // names it defined come back after.
  ir::Graph outer = std::move(graph_);
  const Json* outer_values = tensor_values_;
  const std::string outer_where = where_;
  const auto outer_sym_values = sym_values_;
  LiftedScalars outer_lifted_scalars = std::move(lifted_scalars_);
  const Json* outer_nodes = graph_nodes_;
  auto outer_lifted = std::move(lifted_);
  lifted_.clear();
  graph_ = ir::Graph();
  where_ = outer_where + ": subgraph '" + name + "'";
  tensor_values_ = &member(graph, "tensor_values", where_);
  graph_nodes_ = &member(graph, "nodes", where_);
  lifted_scalars_ = find_lifted_scalars(*graph_nodes_, *tensor_values_);
  // The model's symbols, each read from a branch input where one has it as a dimension.
  for (const auto& [symbol, info] : outer.symbols()) {
    ir::SymbolInfo copy = info;
    copy.input = ir::kNoValue;
    copy.dim = -1;
    copy.from_value = false;
    graph_.symbols()[symbol] = copy;
  }
  if (auto it = graph.find("sym_int_values"); it != graph.end() && it->is_object()) {
    for (const auto& [sym_name, value] : it->items()) {
      if (lifted_scalars_.defined_by.count(sym_name)) continue;  // lifted_scalar computes it
      sym_values_[sym_name] = read_sym_int(value, where_ + ": SymInt '" + sym_name + "'");
    }
  }
  const Json& inputs = member(graph, "inputs", where_);
  if (!inputs.is_array() || inputs.size() != operands.size())
    throw CompileError(where_ + ": takes " + std::to_string(inputs.is_array() ? inputs.size() : 0) +
                       " inputs for " + std::to_string(operands.size()) + " operands");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string input_what = where_ + ": input " + std::to_string(i);
    auto [input_kind, t] = union_member(inputs[i], input_what);
    if (input_kind != "as_tensor")
      throw CompileError(input_what + " is a " + input_kind + " (pteron's branches take tensors)");
    const std::string input = json_string(member(*t, "name", input_what), input_what);
    const SubgraphInput& operand = operands[i];
    ir::TensorSpec spec = spec_of(input);
    if (spec.dtype != operand.spec.dtype || spec.sizes != operand.spec.sizes)
      throw CompileError(input_what + " is " + ir::to_string(spec) + " for an operand " +
                         ir::to_string(operand.spec));
    if (operand.constant != nullptr) {
      graph_.add_constant(input, std::move(spec), *operand.constant);
      continue;
    }
    const ir::ValueId id = graph_.add_input(input, std::move(spec));
    for (size_t d = 0; d < graph_.value(id).spec.rank(); ++d) {
      const ir::SymExpr* size = graph_.value(id).spec.sym_size(d);
      const std::optional<ir::AffineSymbol> affine =
          size != nullptr ? ir::affine_symbol(*size) : std::nullopt;
      if (!affine) continue;
      ir::SymbolInfo& info = graph_.symbols()[affine->symbol];
      if (info.input != ir::kNoValue) continue;
      info.input = id;
      info.dim = static_cast<int32_t>(d);
      info.scale = affine->scale;
      info.offset = affine->offset;
    }
  }
  for (auto it = graph_.symbols().begin(); it != graph_.symbols().end();) {
    it = it->second.input == ir::kNoValue ? graph_.symbols().erase(it) : std::next(it);
  }
  const Json& nodes = *graph_nodes_;
  if (!nodes.is_array()) throw CompileError(where_ + ": 'nodes' is not a list");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!lifted_scalars_.nodes.count(i)) read_node(nodes[i], static_cast<int>(i));
  }
  std::vector<ir::ValueId> outputs;
  const Json& outs = member(graph, "outputs", where_);
  if (!outs.is_array()) throw CompileError(where_ + ": 'outputs' is not a list");
  for (const Json& out : outs) {
    auto [out_kind, t] = union_member(out, where_ + ": output");
    if (out_kind != "as_tensor")
      throw CompileError(where_ + ": returns a " + out_kind +
                         " (pteron's branches return tensors)");
    outputs.push_back(lookup(json_string(member(*t, "name", where_), where_), where_));
  }
  graph_.set_outputs(std::move(outputs));
  graph_.verify();
  ir::Graph out = std::move(graph_);
  graph_ = std::move(outer);
  tensor_values_ = outer_values;
  where_ = outer_where;
  sym_values_ = outer_sym_values;
  lifted_scalars_ = std::move(outer_lifted_scalars);
  graph_nodes_ = outer_nodes;
  lifted_ = std::move(outer_lifted);
  return out;
}

void Loader::read_while_loop(const Json& node, const ir::DebugHandle& debug,
                             const std::string& what) {
  const Json& inputs = member(node, "inputs", what);
  if (!inputs.is_array() || inputs.size() != 4)
    throw CompileError(what +
                       ": while_loop takes a condition, a body, carried and additional inputs");
  const std::vector<ir::ValueId> carried =
      tensor_list_arg(inputs[2], what, "while_loop carried inputs");
  const std::vector<ir::ValueId> additional =
      tensor_list_arg(inputs[3], what, "while_loop additional inputs");
  // The carried values change every iteration: inputs of both subgraphs even where constant.
  std::vector<SubgraphInput> operands = subgraph_inputs(carried, false);
  for (const SubgraphInput& a : subgraph_inputs(additional, true)) operands.push_back(a);
  ir::Graph cond = read_branch(member(inputs[0], "arg", what), operands, what);
  ir::Graph body = read_branch(member(inputs[1], "arg", what), operands, what);
  if (cond.outputs().size() != 1 ||
      cond.value(cond.outputs()[0]).spec.dtype != ir::ScalarType::Bool ||
      cond.value(cond.outputs()[0]).spec.numel() != 1)
    throw CompileError(what + ": the while_loop condition must return one bool");
  if (body.outputs().size() != carried.size())
    throw CompileError(what + ": the while_loop body returns " +
                       std::to_string(body.outputs().size()) + " values for " +
                       std::to_string(carried.size()) + " carried");
  std::vector<std::optional<ir::NewValue>> outputs;
  const std::vector<ir::NewValue> outs = tensor_outputs(node, carried.size(), what);
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::TensorSpec& spec = outs[i].spec;
    const ir::TensorSpec& in = graph_.value(carried[i]).spec;
    const ir::TensorSpec& next = body.value(body.outputs()[i]).spec;
    if (spec.is_dynamic() || in.dtype != spec.dtype || in.sizes != spec.sizes ||
        next.dtype != spec.dtype || next.sizes != spec.sizes) {
      throw CompileError(what + ": carried value " + std::to_string(i) + " is " +
                         ir::to_string(in) + ", the body returns " + ir::to_string(next) +
                         " (pteron's loops carry values of one static shape)");
    }
    outputs.push_back(outs[i]);
  }
  const int64_t c = static_cast<int64_t>(graph_.add_branch(std::move(cond)));
  const int64_t b = static_cast<int64_t>(graph_.add_branch(std::move(body)));
  std::vector<ir::Argument> args = {ir::Argument(ir::TensorList{carried}),
                                    ir::Argument(ir::TensorList{non_constant(additional)}),
                                    ir::Argument(c), ir::Argument(b)};
  graph_.add_node(schema_of(ops::pteron::while_loop), std::move(args), std::move(outputs), debug);
}

void Loader::read_scan(const Json& node, bool is_map, const ir::DebugHandle& debug,
                       const std::string& what) {
  // scan(combine, init, xs, additional) and map_impl(body, xs, additional): the subgraph runs on
  // each row of xs (dim 0) in turn, scan's also on the carry, which it returns updated with the
  // row's results; the results of every row are stacked along dim 0.
  const char* op = is_map ? "map" : "scan";
  const Json& inputs = member(node, "inputs", what);
  const size_t expected = is_map ? 3 : 4;
  if (!inputs.is_array() || inputs.size() != expected)
    throw CompileError(what + ": " + op + " takes " + std::to_string(expected) + " arguments");
  const std::string name = std::string(op) + " ";
  const std::vector<ir::ValueId> init =
      is_map ? std::vector<ir::ValueId>{}
             : tensor_list_arg(inputs[1], what, name + "initial carry");
  const std::vector<ir::ValueId> xs =
      tensor_list_arg(inputs[is_map ? 1 : 2], what, name + "inputs");
  const std::vector<ir::ValueId> additional =
      tensor_list_arg(inputs[is_map ? 2 : 3], what, name + "additional inputs");
  if (xs.empty()) throw CompileError(what + ": " + op + " over no inputs");
  // The rows: dim 0 of every input, one count (static, or a size of the model's dynamic
  // inputs, which the program reads each call); each row of one static shape.
  const ir::TensorSpec& first = graph_.value(xs[0]).spec;
  const ir::SymExprPtr rows_sym = first.sym_sizes.empty() ? nullptr : first.sym_sizes[0];
  const int64_t rows = first.rank() ? first.sizes[0] : 0;
  std::vector<ir::TensorSpec> row_specs;
  for (ir::ValueId x : xs) {
    const ir::TensorSpec& spec = graph_.value(x).spec;
    const ir::SymExpr* n = spec.rank() ? spec.sym_size(0) : nullptr;
    const bool same_rows =
        spec.rank() && spec.sizes[0] == rows &&
        (n == nullptr ? rows_sym == nullptr : rows_sym != nullptr && n->str() == rows_sym->str());
    if (!same_rows || !static_rows(spec))
      throw CompileError(what + ": " + op + " over " + ir::to_string(spec) +
                         " is not supported (pteron's loops take rows of one static shape, as "
                         "many from each input)");
    row_specs.push_back(ir::TensorSpec::contiguous(
        spec.dtype, std::vector<int64_t>(spec.sizes.begin() + 1, spec.sizes.end())));
  }
  if (rows == 0) throw CompileError(what + ": " + op + " over zero rows");
  if (rows_sym != nullptr && first.is_dynamic() && first.min_sizes[0] < 1) {
    // torch's scan and map refuse zero rows; so does the program, before the loop.
    add_size_check({false, "ge", rows_sym, ir::SymExpr::constant(1)},
                   std::string(op) + " over zero rows (it needs at least one)", debug);
  }
  std::vector<SubgraphInput> operands = subgraph_inputs(init, false);
  for (const ir::TensorSpec& spec : row_specs) operands.push_back({spec, nullptr});
  for (const SubgraphInput& a : subgraph_inputs(additional, true)) operands.push_back(a);
  ir::Graph step = read_branch(member(inputs[0], "arg", what), operands, what);
  const size_t carry = init.size();
  if (step.outputs().size() < carry)
    throw CompileError(what + ": the " + op + " function returns fewer values than it carries");
  std::vector<std::optional<ir::NewValue>> outputs;
  const std::vector<ir::NewValue> outs = tensor_outputs(node, step.outputs().size(), what);
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::TensorSpec& spec = outs[i].spec;
    const ir::TensorSpec& result = step.value(step.outputs()[i]).spec;
    std::vector<int64_t> sizes = result.sizes;
    const bool stacked = i >= carry;
    if (stacked) sizes.insert(sizes.begin(), rows);
    const bool shape_ok =
        stacked ? static_rows(spec) && (spec.sym_size(0) == nullptr) == (rows_sym == nullptr)
                : !spec.is_dynamic();
    if (!shape_ok || result.is_dynamic() || spec.dtype != result.dtype || spec.sizes != sizes ||
        (!stacked && graph_.value(init[i]).spec.sizes != sizes)) {
      throw CompileError(what + ": " + op + " output " + std::to_string(i) + " is " +
                         ir::to_string(spec) + ", its function returns " + ir::to_string(result) +
                         " (pteron's loops carry values of one static shape)");
    }
    outputs.push_back(outs[i]);
  }
  // The rows each iteration reads: outputs of the node (planned with its outputs), read by
  // nothing else.
  for (size_t j = 0; j < row_specs.size(); ++j) {
    outputs.push_back(ir::NewValue{
        graph_.unique_name(debug.node_name + "_row_" + std::to_string(j)), row_specs[j]});
  }
  const int64_t f = static_cast<int64_t>(graph_.add_branch(std::move(step)));
  std::vector<ir::Argument> args = {
      ir::Argument(ir::TensorList{init}), ir::Argument(ir::TensorList{xs}),
      ir::Argument(ir::TensorList{non_constant(additional)}), ir::Argument(f),
      rows_sym != nullptr ? ir::Argument(ir::SymInt{rows_sym}) : ir::Argument(rows)};
  graph_.add_node(schema_of(ops::pteron::scan), std::move(args), std::move(outputs), debug);
}

}  // namespace pteron::compiler::frontend::detail
