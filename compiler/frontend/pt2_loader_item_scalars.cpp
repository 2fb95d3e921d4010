// Values read from tensors with item() that the program computes (frontend/value_checks.h:
// LiftedScalars): the scalars of cond predicates and the floats and bools passed to tensor ops,
// with the Python arithmetic and comparisons on them, read as ATen ops on one-element tensors.
// Integers compute in i64 and floating values in f64, as Python's int and float do, so a
// comparison with a constant gives what eager gives. An op taking such a value as a Scalar is
// called through its Tensor overload.
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

// `op` on `args` (the rest of its arguments at their defaults), its output `output` or else a
// contiguous tensor of `dtype` and `sizes`.
ir::ValueId add_op(ir::Graph& graph, const std::string& op, std::vector<ir::Argument> args,
                   ir::ScalarType dtype, std::vector<int64_t> sizes, const ir::DebugHandle& debug,
                   std::optional<ir::NewValue> output = std::nullopt) {
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(ir::OpRef::parse(op));
  if (schema == nullptr) throw CompileError(op + " is not in the operator table");
  for (size_t i = args.size(); i < schema->args.size(); ++i) {
    if (!schema->args[i].default_value) throw CompileError(op + ": argument without a default");
    args.push_back(*schema->args[i].default_value);
  }
  if (!output) {
    output = ir::NewValue{graph.unique_name(debug.node_name + "_value"),
                          ir::TensorSpec::contiguous(dtype, std::move(sizes))};
  }
  const ir::NodeId n = graph.add_node(*schema, std::move(args), {std::move(output)}, debug);
  return graph.node(n).outputs[0];
}

// Another overload of `schema`'s op taking what `args` hold: a Tensor (Tensor?) wherever a
// Scalar (Scalar?) argument holds a tensor, every other argument of the same name and type or a
// literal Scalar where the overload takes a Tensor, which `wrap` makes one (clamp.Tensor for
// clamp(x, t.item(), 1.0)); nullptr when the registry has none.
const ir::OpSchema* tensor_overload(const ir::OpSchema& schema, std::vector<ir::Argument>& args,
                                    const std::function<ir::ValueId(const ir::Scalar&)>& wrap) {
  const auto is_scalar = [](const ir::ArgType& t) {
    return t.base == ir::BaseType::Scalar && !t.is_list;
  };
  const auto is_tensor = [](const ir::ArgType& t) {
    return t.base == ir::BaseType::Tensor && !t.is_list;
  };
  for (const ir::OpSchema* other : ir::OpSchemaRegistry::global().all()) {
    if (other == &schema || other->op.ns != schema.op.ns || other->op.name != schema.op.name ||
        other->is_out_variant || other->mutates || other->args.size() != args.size() ||
        other->returns.size() != schema.returns.size())
      continue;
    bool fits = true;
    for (size_t i = 0; fits && i < args.size(); ++i) {
      const ir::ArgType& from = schema.args[i].type;
      const ir::ArgType& to = other->args[i].type;
      fits = other->args[i].name == schema.args[i].name &&
             (from.spelling == to.spelling
                  ? !(is_scalar(from) && args[i].is_tensor())
                  : is_scalar(from) && is_tensor(to) && (to.optional || !args[i].is_none()));
    }
    if (!fits) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].is<ir::Scalar>() && is_tensor(other->args[i].type))
        args[i] = ir::Argument(ir::TensorRef{wrap(args[i].get<ir::Scalar>())});
    }
    return other;
  }
  return nullptr;
}

}  // namespace

ir::ValueId Loader::lifted_number(const std::string& name, ir::ScalarType float_type,
                                  const ir::DebugHandle& debug, const std::string& what) {
  ir::ValueId v = lifted_scalar(name, debug, what);
  const ir::TensorSpec spec = graph_.value(v).spec;
  // A Python float is f64; torch computes with it in the other tensors' floating type, as it
  // does with a literal (wrap_scalar).
  if (spec.dtype == ir::ScalarType::Double && float_type != ir::ScalarType::Double)
    v = add_op(graph_, "aten::_to_copy", {ir::Argument(ir::TensorRef{v}), float_type}, float_type,
               spec.sizes, debug);
  // A number broadcasts as a 0-dim tensor; [1, 1] would add dimensions.
  if (spec.rank() > 0)
    v = add_op(graph_, "aten::view_copy", {ir::Argument(ir::TensorRef{v}), std::vector<int64_t>{}},
               graph_.value(v).spec.dtype, {}, debug);
  return v;
}

bool takes_lifted_scalar(const ir::OpSchema& schema, const std::vector<ir::Argument>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::ArgType& t = schema.args[i].type;
    if (t.base == ir::BaseType::Scalar && !t.is_list && args[i].is_tensor()) return true;
  }
  return false;
}

ir::NodeId Loader::add_lifted_scalar_call(const ir::OpSchema& schema,
                                          std::vector<ir::Argument> args,
                                          std::vector<std::optional<ir::NewValue>> outputs,
                                          ir::ScalarType float_type, const ir::DebugHandle& debug,
                                          const std::string& what) {
  // torch.full / full_like / scalar_tensor of the value: the value, cast and broadcast.
  const std::string op = schema.op.str();
  if (op == "aten::full.default" || op == "aten::full_like.default" ||
      op == "aten::scalar_tensor.default") {
    const ir::Argument& value =
        args[schema.arg_index(op == "aten::scalar_tensor.default" ? "s" : "fill_value")];
    if (outputs.size() != 1 || !outputs[0]) throw CompileError(what + ": malformed " + op);
    const ir::TensorSpec& out = outputs[0]->spec;
    if (!out.has_sym_sizes())
      throw CompileError(what + ": " + op + " of an item() value into " + ir::to_string(out) +
                         ", whose sizes pteron does not know");
    ir::Argument sizes = std::vector<int64_t>(out.sizes);
    if (out.is_dynamic()) {
      ir::SymIntList list;
      for (size_t d = 0; d < out.rank(); ++d)
        list.items.push_back({out.sizes[d], out.sym_sizes[d]});
      sizes = list;
    }
    ir::ValueId v = value.tensor();
    if (graph_.value(v).spec.dtype != out.dtype)
      v = add_op(graph_, "aten::_to_copy", {ir::Argument(ir::TensorRef{v}), out.dtype}, out.dtype,
                 {}, debug);
    const ir::ValueId filled =
        add_op(graph_, "aten::expand_copy", {ir::Argument(ir::TensorRef{v}), sizes}, out.dtype,
               out.sizes, debug, std::move(outputs[0]));
    return graph_.value(filled).producer;
  }
  const ir::OpSchema* other = tensor_overload(schema, args, [&](const ir::Scalar& s) {
    return wrap_scalar(s, float_type, debug.node_name, "scalar");
  });
  if (other == nullptr) {
    std::string arg;
    for (size_t i = 0; i < args.size() && arg.empty(); ++i) {
      if (schema.args[i].type.base == ir::BaseType::Scalar && args[i].is_tensor())
        arg = schema.args[i].name;
    }
    throw CompileError(what + ": argument '" + arg + "' is a value read from a tensor with " +
                       "item(), which the program computes as a tensor, and " + op +
                       " has no overload taking a Tensor there");
  }
  return graph_.add_node(*other, std::move(args), std::move(outputs), debug);
}

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
  if (lifted_scalars_.defined_by.count(name)) return lifted_scalar(name, debug, what);
  if (kind != "as_sym_int") throw_symbolic(what, "symbolic value '" + name + "'");
  return wrap_sym_int(sym_int_named(name, what, true), debug, name);  // a size of the inputs
}

ir::ValueId Loader::lifted_scalar(const std::string& name, const ir::DebugHandle& debug,
                                  const std::string& what) {
  if (auto it = lifted_.find(name); it != lifted_.end()) {
    if (it->second == ir::kNoValue)  // a damaged file's cycle
      throw CompileError(what + ": item() value '" + name + "' is computed from itself");
    return it->second;
  }
  lifted_[name] = ir::kNoValue;  // being computed
  const Json& node = (*graph_nodes_)[lifted_scalars_.defined_by.at(name)];
  const std::string target = json_string(member(node, "target", what), what);
  const std::string node_what = what + ": item() value '" + name + "' (" + target + ")";
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
                       spec.sizes, debug);
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
              add_op(graph_, "aten::_to_copy", {a, to}, to, graph_.value(v).spec.sizes, debug)});
        }
      }
    }
    // sym_float(n): the operand as a float, which the cast above made it.
    out = py == "float" ? args[0].get<ir::TensorRef>().id
                        : add_op(graph_, aten->second, std::move(args), dtype,
                                 std::vector<int64_t>(rank, 1), debug);
  }
  lifted_[name] = out;
  return out;
}

}  // namespace pteron::compiler::frontend::detail
