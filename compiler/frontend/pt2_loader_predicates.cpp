// cond predicates computed from tensor values (frontend/value_checks.h: ScalarPredicates): the
// scalars export reads with item() and the Python arithmetic and comparisons on them, read as
// ATen ops on one-element tensors. Integers compute in i64 and floating values in f64, as Python's
// int and float do, so a comparison with a constant gives what eager gives.
#include "compiler/frontend/pt2_loader_class.h"

namespace pteron::compiler::frontend::detail {
namespace {

// Python's operator (the target less "_operator." / "torch.sym_") -> the ATen op on tensors.
const std::map<std::string, std::string>& aten_ops() {
  static const std::map<std::string, std::string> ops = {
      {"add", "aten::add.Tensor"},        {"sub", "aten::sub.Tensor"},
      {"mul", "aten::mul.Tensor"},        {"truediv", "aten::div.Tensor"},
      {"floordiv", "aten::floor_divide"}, {"mod", "aten::remainder.Tensor"},
      {"pow", "aten::pow.Tensor_Tensor"}, {"neg", "aten::neg"},
      {"gt", "aten::gt.Tensor"},          {"ge", "aten::ge.Tensor"},
      {"lt", "aten::lt.Tensor"},          {"le", "aten::le.Tensor"},
      {"eq", "aten::eq.Tensor"},          {"ne", "aten::ne.Tensor"},
      {"and_", "aten::logical_and"},      {"or_", "aten::logical_or"},
      {"not_", "aten::logical_not"},      {"not", "aten::logical_not"},
      {"ite", "aten::where.self"},        {"float", "aten::_to_copy"}};
  return ops;
}

bool is_comparison_or_logic(const std::string& op) {
  static const std::set<std::string> ops = {"gt", "ge",   "lt",  "le",   "eq",
                                            "ne", "and_", "or_", "not_", "not"};
  return ops.count(op) > 0;
}

// `op` on `args` (the rest of its arguments at their defaults), its output a tensor of `dtype`
// shaped [1] * rank (every operand has one element).
ir::ValueId add_op(ir::Graph& graph, const std::string& op, std::vector<ir::Argument> args,
                   ir::ScalarType dtype, size_t rank, const ir::DebugHandle& debug) {
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(ir::OpRef::parse(op));
  if (schema == nullptr) throw CompileError(op + " is not in the operator table");
  for (size_t i = args.size(); i < schema->args.size(); ++i) {
    if (!schema->args[i].default_value) throw CompileError(op + ": argument without a default");
    args.push_back(*schema->args[i].default_value);
  }
  const ir::NodeId n = graph.add_node(
      *schema, std::move(args),
      {ir::NewValue{graph.unique_name(debug.node_name + "_value"),
                    ir::TensorSpec::contiguous(dtype, std::vector<int64_t>(rank, 1))}},
      debug);
  return graph.node(n).outputs[0];
}

}  // namespace

ir::ValueId Loader::lifted_operand(const Json& arg, const ir::DebugHandle& debug,
                                   const std::string& what) {
  auto [kind, v] = union_member(arg, what);
  // Constants as Python numbers: i64, f64 (wrap_scalar's float type), bool.
  const auto constant = [&](const ir::Scalar& s) {
    return wrap_scalar(s, ir::ScalarType::Double, debug.node_name, "c");
  };
  if (kind == "as_int") return constant(ir::Scalar{json_int(*v, what)});
  if (kind == "as_bool") return constant(ir::Scalar{json_bool(*v, what)});
  if (kind == "as_float") return constant(ir::Scalar{json_double(*v, what)});
  if (kind != "as_sym_int" && kind != "as_sym_float" && kind != "as_sym_bool")
    throw CompileError(what + ": an argument of kind " + kind);
  auto [sym_kind, sym] = union_member(*v, what);
  if (sym_kind == "as_int") return lifted_operand(Json{{"as_int", *sym}}, debug, what);
  if (sym_kind == "as_float") return lifted_operand(Json{{"as_float", *sym}}, debug, what);
  if (sym_kind == "as_bool") return lifted_operand(Json{{"as_bool", *sym}}, debug, what);
  const std::string name = json_string(*sym, what);
  if (scalar_predicates_.defined_by.count(name)) return lifted_scalar(name, debug, what);
  if (kind != "as_sym_int") throw_symbolic(what, "symbolic value '" + name + "'");
  return wrap_sym_int(sym_int_named(name, what, true), debug, name);  // a size of the inputs
}

ir::ValueId Loader::lifted_scalar(const std::string& name, const ir::DebugHandle& debug,
                                  const std::string& what) {
  if (auto it = lifted_.find(name); it != lifted_.end()) {
    if (it->second == ir::kNoValue)  // a damaged file's cycle
      throw CompileError(what + ": predicate '" + name + "' is computed from itself");
    return it->second;
  }
  lifted_[name] = ir::kNoValue;  // being computed
  const Json& node = (*graph_nodes_)[scalar_predicates_.defined_by.at(name)];
  const std::string target = json_string(member(node, "target", what), what);
  const std::string node_what = what + ": predicate '" + name + "' (" + target + ")";
  ir::ValueId out;
  if (target == "torch.ops.aten._local_scalar_dense.default") {
    // item(): the tensor itself, as a Python number (f64 or i64) where it is not one.
    const ir::ValueId t = item_tensor(node, node_what);
    const ir::TensorSpec& spec = graph_.value(t).spec;
    if (spec.is_dynamic() || spec.numel() != 1)
      throw CompileError(node_what + ": item() of " + ir::to_string(spec));
    const bool floating =
        spec.dtype == ir::ScalarType::Float || spec.dtype == ir::ScalarType::Double ||
        spec.dtype == ir::ScalarType::Half || spec.dtype == ir::ScalarType::BFloat16;
    if (!floating && !is_item_integer(spec.dtype) && spec.dtype != ir::ScalarType::Bool)
      throw CompileError(node_what + ": item() of a " + ir::dtype_name(spec.dtype) + " tensor");
    const ir::ScalarType python = spec.dtype == ir::ScalarType::Bool ? ir::ScalarType::Bool
                                  : floating                         ? ir::ScalarType::Double
                                                                     : ir::ScalarType::Long;
    out = spec.dtype == python
              ? t
              : add_op(graph_, "aten::_to_copy", {ir::Argument(ir::TensorRef{t}), python}, python,
                       spec.rank(), debug);
  } else {
    // Python arithmetic: one ATen op on the operands as tensors.
    const std::string op = target.substr(target.find_first_of('.') + 1);
    const std::string py = op.starts_with("sym_") ? op.substr(4) : op;
    auto aten = aten_ops().find(py);
    if (aten == aten_ops().end()) throw CompileError(node_what + ": not a lifted operation");
    std::vector<ir::Argument> args;
    size_t rank = 0;
    bool any_double = false, all_bool = true;
    const Json& inputs = member(node, "inputs", node_what);
    const size_t arity = py == "neg" || py == "not_" || py == "not" || py == "float" ? 1
                         : py == "ite"                                               ? 3
                                                                                     : 2;
    if (!inputs.is_array() || inputs.size() != arity)
      throw CompileError(node_what + ": takes " + std::to_string(arity) + " operand(s)");
    for (const Json& input : inputs) {
      const ir::ValueId v = lifted_operand(member(input, "arg", node_what), debug, node_what);
      const ir::TensorSpec& spec = graph_.value(v).spec;
      rank = std::max(rank, spec.rank());
      any_double = any_double || spec.dtype == ir::ScalarType::Double;
      all_bool = all_bool && spec.dtype == ir::ScalarType::Bool;
      args.push_back(ir::Argument(ir::TensorRef{v}));
    }
    const bool logic = py == "and_" || py == "or_" || py == "not_" || py == "not";
    if (logic && !all_bool)
      throw CompileError(node_what + ": bitwise operations on numbers are not supported");
    // Python's / gives a float, and so does ** where the exponent is negative: both in f64.
    const bool to_float = py == "truediv" || py == "pow" || py == "float";
    ir::ScalarType dtype = is_comparison_or_logic(py) ? ir::ScalarType::Bool
                           : to_float || any_double   ? ir::ScalarType::Double
                                                      : ir::ScalarType::Long;
    if (py == "ite") {
      const auto dtype_of = [&](size_t i) {
        return graph_.value(args[i].get<ir::TensorRef>().id).spec.dtype;
      };
      dtype = dtype_of(1);
      if (dtype_of(0) != ir::ScalarType::Bool || dtype_of(2) != dtype)
        throw CompileError(node_what + ": sym_ite takes a bool and two values of one type");
    } else if (!is_comparison_or_logic(py)) {
      // Python's arithmetic on bools is on ints.
      for (ir::Argument& a : args) {
        const ir::ValueId v = a.get<ir::TensorRef>().id;
        const ir::ScalarType from = graph_.value(v).spec.dtype;
        const ir::ScalarType to = dtype == ir::ScalarType::Double ? dtype : ir::ScalarType::Long;
        if (from != to) {
          a = ir::Argument(ir::TensorRef{
              add_op(graph_, "aten::_to_copy", {a, to}, to, graph_.value(v).spec.rank(), debug)});
        }
      }
    }
    // sym_float(n): the operand as a float, which the cast above made it.
    out = py == "float" ? args[0].get<ir::TensorRef>().id
                        : add_op(graph_, aten->second, std::move(args), dtype, rank, debug);
  }
  lifted_[name] = out;
  return out;
}

}  // namespace pteron::compiler::frontend::detail
