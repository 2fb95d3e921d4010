#include "compiler/frontend/pt2_loader.h"

#include "compiler/frontend/pt2_loader_class.h"

namespace pteron::compiler::frontend {
namespace detail {
namespace {

constexpr int kSchemaMajor = 8;  // torch 2.13 writes schema version 8.x

}  // namespace

ir::Graph Loader::load() {
  check_layout();
  const std::string model_entry = "models/" + options_.model_name + ".json";
  where_ = archive_.path() + ": " + archive_.full_name(model_entry);
  if (!archive_.has(model_entry)) missing_model(model_entry);
  try {
    model_ = Json::parse(archive_.read_text(model_entry));
  } catch (const Json::parse_error& e) {
    throw CompileError(where_ + ": invalid JSON: " + e.what());
  }
  try {
    check_version();
    const Json& module = member(model_, "graph_module", where_);
    const Json& graph = member(module, "graph", where_);
    tensor_values_ = &member(graph, "tensor_values", where_);
    graph_nodes_ = &member(graph, "nodes", where_);
    value_checks_ = find_value_checks(*graph_nodes_, *tensor_values_);
    lifted_scalars_ = find_lifted_scalars(*graph_nodes_, *tensor_values_);
    read_symbols(graph);
    PayloadConfigs configs(archive_, options_.model_name);
    read_inputs(member(module, "signature", where_), graph, configs);
    const Json& nodes = *graph_nodes_;
    if (!nodes.is_array()) throw CompileError(where_ + ": 'nodes' is not a list");
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!value_checks_.nodes.count(i) && !lifted_scalars_.nodes.count(i))
        read_node(nodes[i], static_cast<int>(i));
    }
    read_outputs(member(module, "signature", where_));
    read_pytree_specs(module);
  } catch (const Json::exception& e) {
    // Checked accessors cover the expected shapes; this catches the rest of a malformed file.
    throw CompileError(where_ + ": malformed export JSON: " + e.what());
  } catch (const CompileError& e) {
    // Graph-building errors (duplicate names, ...) name the node but not the file.
    const std::string message = e.what();
    if (message.starts_with(archive_.path())) throw;
    throw CompileError(where_ + ": " + message);
  }
  graph_.metadata()["source"] = archive_.path();
  if (!value_checks_.sources.empty()) {
    std::string sources;
    for (const std::string& s : value_checks_.sources) sources += (sources.empty() ? "" : ", ") + s;
    graph_.metadata()[kUncheckedValueChecks] = sources;
  }
  graph_.verify();
  return std::move(graph_);
}

void Loader::check_layout() {
  const std::string& path = archive_.path();
  if (archive_.root().empty()) {
    for (const std::string& name : archive_.entries()) {
      if (name.ends_with("serialized_exported_program.json")) {
        std::string version;
        const std::string prefix = name.substr(0, name.size() - 32);
        if (archive_.has(prefix + "version")) version = archive_.read_text(prefix + "version");
        throw CompileError(path + ": written by an older torch.export.save (legacy zip layout" +
                           (version.empty() ? "" : ", schema version " + version) +
                           "); pteron reads the PT2 archive torch 2.13 writes: re-export with "
                           "torch 2.13");
      }
    }
    throw CompileError(path + ": not a torch.export.save archive (no archive_format entry)");
  }
  const std::string format = archive_.read_text("archive_format");
  if (format != "pt2") {
    throw CompileError(path + ": " + archive_.full_name("archive_format") + " is '" + format +
                       "', expected 'pt2'");
  }
  if (archive_.has("archive_version")) {
    const std::string version = archive_.read_text("archive_version");
    if (version != "0") {
      throw CompileError(path + ": PT2 archive version " + version +
                         " is not supported (pteron reads version 0, written by torch 2.13)");
    }
  }
  if (archive_.has("data/weights/" + options_.model_name + ".pt")) {
    throw CompileError(path + ": weights are pickled in " +
                       archive_.full_name("data/weights/" + options_.model_name + ".pt") +
                       " (legacy PT2 layout); re-export with torch 2.13");
  }
}

void Loader::check_version() {
  const Json& version = member(model_, "schema_version", where_);
  const int64_t major = json_int(member(version, "major", where_), where_ + " schema_version");
  const int64_t minor = json_int(member(version, "minor", where_), where_ + " schema_version");
  std::string torch_version = "<=2.4";  // what torch assumes when the field is absent
  if (auto it = model_.find("torch_version"); it != model_.end() && it->is_string()) {
    torch_version = it->get<std::string>();
  }
  const std::string version_text = std::to_string(major) + "." + std::to_string(minor);
  if (major != kSchemaMajor) {
    throw CompileError(where_ + ": export schema version " + version_text + " (written by torch " +
                       torch_version + ") is not supported; pteron " +
                       "reads schema version 8 (torch 2.13): re-export with torch 2.13");
  }
  graph_.metadata()["torch_version"] = torch_version;
  graph_.metadata()["schema_version"] = version_text;
}

void Loader::read_symbols(const Json& graph) {
  if (auto it = graph.find("sym_float_values"); it != graph.end() && it->is_object()) {
    for (const auto& [name, value] : it->items()) {  // left-out value checks' scalars: never read
      if (!value_checks_.symbols.count(name) && !lifted_scalars_.defined_by.count(name))
        throw_symbolic(where_ + ": the graph", "symbolic value '" + name + "'");
    }
  }
  if (auto it = model_.find("range_constraints"); it != model_.end() && it->is_object()) {
    for (const auto& [name, range] : it->items()) {
      const std::string what = where_ + ": range constraint '" + name + "'";
      ir::SymbolInfo info;
      const Json& lo = member(range, "min_val", what);
      const Json& hi = member(range, "max_val", what);
      // Sizes are never negative; an item() value's range keeps torch's own min (torch_min_).
      if (lo.is_number_integer()) torch_min_[name] = lo.get<int64_t>();
      info.min = lo.is_number_integer() ? std::max<int64_t>(lo.get<int64_t>(), 0) : 0;
      // No max (None, int_oo) or one beyond int32 sizes: unbounded, refused where used.
      info.max = hi.is_number_integer() && hi.get<int64_t>() <= INT32_MAX ? hi.get<int64_t>() : -1;
      if (info.max >= 0 && info.max < info.min)
        throw CompileError(what + ": max " + std::to_string(info.max) + " is below min " +
                           std::to_string(info.min));
      graph_.symbols()[name] = info;
    }
  }
  if (auto it = graph.find("sym_int_values"); it != graph.end() && it->is_object()) {
    for (const auto& [name, value] : it->items()) {
      if (value_checks_.symbols.count(name)) continue;       // a left-out value check's
      if (value_checks_.flag_ints.count(name)) continue;     // read_flag_as_int gives it
      if (lifted_scalars_.defined_by.count(name)) continue;  // lifted_scalar computes it
      sym_values_[name] = read_sym_int(value, where_ + ": SymInt '" + name + "'");
    }
  }
}

ir::SymExprPtr Loader::sym_int_named(const std::string& name, const std::string& what,
                                     bool bounded) {
  auto it = sym_values_.find(name);
  if (it == sym_values_.end())
    throw CompileError(what + " refers to SymInt '" + name + "', which sym_int_values lacks");
  std::function<void(const ir::SymExpr&)> check = [&](const ir::SymExpr& e) {
    if (e.op == ir::SymExpr::Op::Symbol) {
      auto s = graph_.symbols().find(e.symbol);
      if (s == graph_.symbols().end() || s->second.input == ir::kNoValue)
        throw CompileError(what + ": symbol '" + e.symbol + "' (in " + it->second->str() +
                           ") is not the size of any input dimension");
    }
    for (const ir::SymExprPtr& o : e.operands) check(*o);
  };
  check(*it->second);
  if (bounded && !it->second->is_constant())
    ir::sym_bounds(*it->second, graph_.symbols(), what);  // refuses unbounded symbols
  return it->second;
}

std::vector<Loader::InputSymbol> Loader::input_symbols(const std::string& input,
                                                       const std::string& what) {
  std::vector<InputSymbol> out;
  const Json& sizes = member(tensor_values_->at(input), "sizes", what);
  for (size_t d = 0; d < sizes.size(); ++d) {
    ir::SymExprPtr e = read_sym_int(sizes[d], what);
    const std::optional<ir::AffineSymbol> affine = ir::affine_symbol(*e);
    if (!affine) continue;
    const InputSymbol found{*affine, static_cast<int32_t>(d)};
    auto s = graph_.symbols().find(found.size.symbol);
    if (s == graph_.symbols().end())
      throw CompileError(what + " ('" + input + "'): dimension " + std::to_string(d) +
                         " is symbol '" + found.size.symbol + "', which has no range constraint");
    if (s->second.max < 0)
      throw CompileError(what + " ('" + input + "'): dimension " + std::to_string(d) +
                         " is dynamic with no upper bound (symbol " + found.size.symbol +
                         "); pteron plans memory at the upper bound: give its "
                         "torch.export.Dim a max");
    out.push_back(found);
  }
  return out;
}

ir::TensorSpec Loader::spec_of(const std::string& name) {
  auto it = tensor_values_->find(name);
  if (it == tensor_values_->end()) {
    throw CompileError(where_ + ": tensor '" + name + "' has no entry in tensor_values");
  }
  const ir::SymbolTable* symbols = graph_.symbols().empty() ? nullptr : &graph_.symbols();
  return read_tensor_meta(*it, where_ + ": tensor '" + name + "'", symbols).spec();
}

ir::ValueId Loader::lookup(const std::string& name, const std::string& what) const {
  if (auto id = graph_.find_value(name)) return *id;
  throw CompileError(what + " refers to tensor '" + name +
                     "', which is not defined before this node");
}

void Loader::read_inputs(const Json& signature, const Json& graph, const PayloadConfigs& configs) {
  const Json& specs = member(signature, "input_specs", where_);
  const Json& inputs = member(graph, "inputs", where_);
  if (!specs.is_array() || !inputs.is_array() || specs.size() != inputs.size()) {
    throw CompileError(where_ + ": input_specs and graph inputs do not match");
  }
  // Buffers the graph mutates become state (kept across calls), not constants.
  std::set<std::string> mutated;
  if (const Json* outs = signature.is_object() && signature.contains("output_specs")
                             ? &signature["output_specs"]
                             : nullptr;
      outs != nullptr && outs->is_array()) {
    for (size_t i = 0; i < outs->size(); ++i) {
      auto [kind, spec] = union_member((*outs)[i], where_ + ": output " + std::to_string(i));
      if (kind == "buffer_mutation")
        mutated.insert(json_string(member(*spec, "buffer_name", where_), where_));
    }
  }
  // The model's flattened arguments in order: tensors (user inputs) and the constants export
  // specialised on, which are no inputs; where each constant sits, with its value.
  int64_t argument = 0;
  Json constant_arguments = Json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string what = where_ + ": input " + std::to_string(i);
    auto [kind, spec] = union_member(specs[i], what);
    if (kind == "user_input" || kind == "constant_input") ++argument;
    if (kind == "user_input") {
      auto [arg_kind, arg] = union_member(member(*spec, "arg", what), what);
      if (arg_kind != "as_tensor") {
        throw CompileError(what + " is a " + arg_kind + " user input; pteron programs take " +
                           "tensors (export specialises Python scalars as constant inputs)");
      }
      const std::string name = json_string(member(*arg, "name", what), what);
      // Symbols first: an unbounded one is refused naming this input and dimension.
      std::vector<InputSymbol> dims;
      if (tensor_values_->find(name) != tensor_values_->end() && !graph_.symbols().empty())
        dims = input_symbols(name, what);
      const ir::ValueId id = graph_.add_input(name, spec_of(name));
      for (const InputSymbol& d : dims) {
        ir::SymbolInfo& info = graph_.symbols()[d.size.symbol];
        // The first dimension that gives it, a whole one before a derived one (read as is).
        const bool whole = d.size.scale == 1 && d.size.offset == 0;
        if (info.input == ir::kNoValue || (whole && (info.scale != 1 || info.offset != 0))) {
          info.input = id;
          info.dim = d.dim;
          info.scale = d.size.scale;
          info.offset = d.size.offset;
        }
      }
    } else if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
      const char* fqn_key = kind == "parameter" ? "parameter_name"
                            : kind == "buffer"  ? "buffer_name"
                                                : "tensor_constant_name";
      const ir::ConstantKind constant_kind = kind == "parameter" ? ir::ConstantKind::Parameter
                                             : kind == "buffer"  ? ir::ConstantKind::Buffer
                                                                 : ir::ConstantKind::TensorConstant;
      const std::string name = json_string(member(member(*spec, "arg", what), "name", what), what);
      const std::string fqn = json_string(member(*spec, fqn_key, what), what);
      ConstantTensor c = read_constant(archive_, configs, fqn, constant_kind);
      if (kind == "buffer") c.data.persistent = json_bool(member(*spec, "persistent", what), what);
      const ir::TensorSpec declared = spec_of(name);
      if (declared.dtype != c.spec.dtype || declared.sizes != c.spec.sizes) {
        throw CompileError(what + " ('" + fqn + "'): the graph declares " +
                           ir::to_string(declared) + " but the stored tensor is " +
                           ir::to_string(c.spec));
      }
      if (kind == "buffer" && mutated.count(fqn))
        graph_.add_state(name, std::move(c.spec), std::move(c.data));
      else
        graph_.add_constant(name, std::move(c.spec), std::move(c.data));
    } else if (kind == "constant_input") {
      // A Python scalar export specialised; nodes carry its value literally.
      constant_arguments.push_back(Json::array({argument - 1, member(*spec, "value", what)}));
    } else if (kind == "token") {
      continue;  // orders effectful calls (with_effects); pteron runs nodes in graph order
    } else {
      throw CompileError(what + " is a " + kind + " input, which pteron does not support");
    }
  }
  if (!constant_arguments.empty())
    graph_.metadata()[kConstantArguments] = constant_arguments.dump();
}

void Loader::read_node(const Json& node, int index) {
  ir::DebugHandle debug;
  debug.id = index;
  std::string what = where_ + ": node " + std::to_string(index);
  const std::string target = json_string(member(node, "target", what), what);
  if (auto it = node.find("name"); it != node.end() && it->is_string()) {
    debug.node_name = it->get<std::string>();
  }
  if (auto it = node.find("metadata"); it != node.end() && it->is_object()) {
    if (auto m = it->find("nn_module_stack"); m != it->end() && m->is_string()) {
      debug.module_path = module_path_from_stack(m->get<std::string>());
    }
    if (auto s = it->find("stack_trace"); s != it->end() && s->is_string()) {
      debug.source = source_from_stack_trace(s->get<std::string>());
    }
  }
  what = where_ + ": node '" + debug.node_name + "' (" + target +
         (debug.location().empty() ? "" : ", " + debug.location()) + ")";

  if (read_flag_as_int(target, node, what)) return;
  if (read_storage_offset(target, node, what)) return;
  if (is_sym_int_op(target, node)) return;  // arguments read its expression instead
  if (read_size_guard(target, node, debug, what)) return;
  if (read_item_size(target, node, debug, what)) return;
  if (target == "torch.ops.higher_order.with_effects") return read_effect(node, what);
  if (target == "torch.ops.higher_order.cond") return read_cond(node, debug, what);
  if (target == "torch.ops.higher_order.while_loop") return read_while_loop(node, debug, what);
  if (target == "torch.ops.higher_order.scan") return read_scan(node, false, debug, what);
  if (target == "torch.ops.higher_order.map_impl") return read_scan(node, true, debug, what);
  const ir::OpSchema& schema = find_schema(target, what);
  const Json& inputs = member(node, "inputs", what);
  if (!inputs.is_array()) throw CompileError(what + ": 'inputs' is not a list");
  std::vector<std::optional<ir::Argument>> args(schema.args.size());
  const ir::ScalarType float_type = wrapped_float_type(inputs, what);
  for (const Json& input : inputs) {
    const std::string arg_name = json_string(member(input, "name", what), what);
    const int i = schema.arg_index(arg_name);
    if (i < 0) {
      throw CompileError(what + ": " + schema.op.str() + " has no argument '" + arg_name + "'");
    }
    const std::string arg_what = what + ": argument '" + arg_name + "'";
    const ValueResolver values{
        [&](const std::string& n) { return lookup(n, arg_what); },
        [&](const ir::Scalar& s) {
          return wrap_scalar(promoted_literal(s, schema.op, inputs), float_type, debug.node_name,
                             arg_name);
        },
        [&](const ir::SymExprPtr& e) { return wrap_sym_int(e, debug, arg_name); },
        [&](const std::string& n) {
          return sym_int_named(n, arg_what, ir::sym_arg_needs_bound(schema, i));
        },
        [&](const std::string& n) -> std::optional<ir::ValueId> {
          if (!lifted_scalars_.defined_by.count(n)) return std::nullopt;
          return lifted_number(n, float_type, debug, arg_what);
        }};
    args[i] = read_argument(member(input, "arg", arg_what), schema.args[i], values, arg_what);
  }
  std::vector<ir::Argument> filled;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]) {
      filled.push_back(std::move(*args[i]));
    } else if (schema.args[i].default_value) {
      filled.push_back(*schema.args[i].default_value);
    } else {
      throw CompileError(what + ": missing required argument '" + schema.args[i].name + "'");
    }
  }
  bound_data_dependent_sizes(node, schema.op.str(), filled, what);
  std::vector<std::optional<ir::NewValue>> outputs = read_node_outputs(node, schema, what);
  const ir::NodeId id =
      takes_lifted_scalar(schema, filled)
          ? add_lifted_scalar_call(schema, std::move(filled), std::move(outputs), float_type, debug,
                                   what)
          : graph_.add_node(schema, std::move(filled), std::move(outputs), std::move(debug));
  bind_data_dependent_sizes(id);
}

void Loader::read_effect(const Json& node, const std::string& what) {
  const Json& inputs = member(node, "inputs", what);
  if (!inputs.is_array() || inputs.size() < 2)
    throw CompileError(what + ": malformed with_effects");
  auto [op_kind, op] = union_member(member(inputs[1], "arg", what), what);
  const std::string effect = op_kind == "as_operator" ? json_string(*op, what) : op_kind;
  if (effect != "torch.ops.aten._linalg_check_errors.default" || inputs.size() < 3) {
    throw CompileError(what + ": " + effect +
                       " has side effects pteron does not run (the only effect it takes is "
                       "linalg's error check)");
  }
  auto [info_kind, info] = union_member(member(inputs[2], "arg", what), what);
  if (info_kind != "as_tensor") throw CompileError(what + ": malformed _linalg_check_errors");
  const ir::Value& checked = graph_.value(
      lookup(json_string(member(*info, "name", what), what), what + ": argument 'info'"));
  const ir::Node* producer =
      checked.producer == ir::kNoNode ? nullptr : &graph_.node(checked.producer);
  if (producer == nullptr || producer->schema->arg_index("check_errors") < 0) {
    throw CompileError(what + ": _linalg_check_errors checks '" + checked.name +
                       "', which no linalg *_ex op computes");
  }
  graph_.set_arg(producer->id, "check_errors", ir::Argument(true));
}

bool Loader::is_sym_int_op(const std::string& target, const Json& node) {
  const bool sym_target = target == "torch.ops.aten.sym_size.int" ||
                          target == "torch.ops.aten.sym_numel.default" ||
                          is_symbolic_arithmetic(target);
  if (!sym_target) return false;
  const Json* outputs = node.contains("outputs") ? &node["outputs"] : nullptr;
  if (outputs == nullptr || !outputs->is_array() || outputs->size() != 1) return false;
  return (*outputs)[0].is_object() && (*outputs)[0].contains("as_sym_int");
}

std::vector<ir::ScalarType> Loader::tensor_input_dtypes(const Json& inputs) const {
  std::vector<ir::ScalarType> dtypes;
  for (const Json& input : inputs) {
    auto arg = input.find("arg");
    if (arg == input.end() || !arg->is_object() || !arg->contains("as_tensor")) continue;
    const Json& name = (*arg)["as_tensor"].value("name", Json());
    if (!name.is_string()) continue;
    if (auto id = graph_.find_value(name.get<std::string>()))
      dtypes.push_back(graph_.value(*id).spec.dtype);
  }
  return dtypes;
}

ir::ScalarType Loader::wrapped_float_type(const Json& inputs, const std::string& what) {
  for (ir::ScalarType t : tensor_input_dtypes(inputs))
    if (t == ir::ScalarType::Double) return ir::ScalarType::Double;
  return ir::ScalarType::Float;
}

namespace {

// The element-wise ops whose result dtype is their operands' promotion (torch's pointwise
// tag, the ones export leaves a literal in a tensor position of): an int literal among their
// floating operands takes part as that float. Other ops (an int repeat count, an index) keep
// it an int.
bool promotes_int_literals(const ir::OpRef& op) {
  static const std::set<std::string_view> kOps = {
      "add",       "sub",       "rsub",       "mul",     "div",       "true_divide", "floor_divide",
      "remainder", "fmod",      "pow",        "where",   "eq",        "ne",          "lt",
      "le",        "gt",        "ge",         "maximum", "minimum",   "fmax",        "fmin",
      "atan2",     "copysign",  "hypot",      "clamp",   "clamp_min", "clamp_max",   "masked_fill",
      "lerp",      "logaddexp", "logaddexp2", "xlogy",   "nextafter"};
  return op.ns == "aten" && kOps.count(op.name) != 0;
}

}  // namespace

ir::Scalar Loader::promoted_literal(const ir::Scalar& s, const ir::OpRef& op,
                                    const Json& inputs) const {
  const auto* i = std::get_if<int64_t>(&s.value);
  if (i == nullptr || !promotes_int_literals(op)) return s;
  for (ir::ScalarType t : tensor_input_dtypes(inputs))
    if (t == ir::ScalarType::Float || t == ir::ScalarType::Double || t == ir::ScalarType::Half ||
        t == ir::ScalarType::BFloat16)
      return ir::Scalar{static_cast<double>(*i)};
  return s;
}

ir::ValueId Loader::wrap_scalar(const ir::Scalar& s, ir::ScalarType float_type,
                                const std::string& node_name, const std::string& arg_name) {
  std::vector<uint8_t> bytes;
  ir::ScalarType dtype;
  auto store = [&](auto v) {
    bytes.resize(sizeof(v));
    std::memcpy(bytes.data(), &v, sizeof(v));
  };
  if (const auto* i = std::get_if<int64_t>(&s.value)) {
    dtype = ir::ScalarType::Long;
    store(*i);
  } else if (const auto* b = std::get_if<bool>(&s.value)) {
    dtype = ir::ScalarType::Bool;
    store(static_cast<uint8_t>(*b));
  } else if (float_type == ir::ScalarType::Double) {
    dtype = ir::ScalarType::Double;
    store(std::get<double>(s.value));
  } else {
    dtype = ir::ScalarType::Float;
    store(static_cast<float>(std::get<double>(s.value)));
  }
  return graph_.add_constant(graph_.unique_name(node_name + "_" + arg_name),
                             ir::TensorSpec::contiguous(dtype, {}),
                             ir::ConstantData::owned(std::move(bytes)));
}

ir::ValueId Loader::wrap_sym_int(const ir::SymExprPtr& e, const ir::DebugHandle& debug,
                                 const std::string& arg_name) {
  static const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(ops::aten::scalar_tensor);
  if (schema == nullptr) throw CompileError("aten::scalar_tensor is not in the operator table");
  std::vector<ir::Argument> args = {ir::Argument(ir::SymInt{e}), ir::Argument(ir::ScalarType::Long),
                                    ir::Argument(ir::None{}), ir::Argument(ir::None{}),
                                    ir::Argument(ir::None{})};
  const std::string name = graph_.unique_name(debug.node_name + "_" + arg_name);
  const ir::NodeId node = graph_.add_node(
      *schema, std::move(args),
      {ir::NewValue{name, ir::TensorSpec::contiguous(ir::ScalarType::Long, {})}}, debug);
  return graph_.node(node).outputs[0];
}

const ir::OpSchema& Loader::find_schema(const std::string& target, const std::string& what) {
  if (!target.starts_with("torch.ops.")) {
    if (is_symbolic_arithmetic(target)) {
      throw_symbolic(what, "Python arithmetic on sizes");
    }
    throw CompileError(what + ": unsupported call target '" + target + "'");
  }
  if (target.starts_with("torch.ops.higher_order.")) {
    throw CompileError(what + ": control flow (" + target +
                       ") is not supported (pteron runs cond, while_loop, scan and map)");
  }
  const ir::OpRef op = ir::OpRef::parse(target);
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(op);
  if (schema == nullptr) {
    // Every core ATen op is in the table, so an aten op missing here either survives
    // decomposition (pteron has no kernel for it) or the .pt2 was saved undecomposed; a custom
    // op of some library is not removed by decomposing, so say what would.
    const bool aten = op.ns == "aten";
    throw CompileError(what + ": operator " + op.str() + " is not in pteron's operator table " +
                       (aten ? "(pteron has no kernel for it; if this .pt2 was saved without "
                               "ep.run_decompositions(), decomposing may replace it)"
                             : "(a custom operator pteron has no kernel for); export the "
                               "model with plain torch ops in its place"));
  }
  return *schema;
}

std::vector<std::optional<ir::NewValue>> Loader::read_node_outputs(const Json& node,
                                                                   const ir::OpSchema& schema,
                                                                   const std::string& what) {
  const Json& outputs = member(node, "outputs", what);
  if (!outputs.is_array() || outputs.size() != schema.returns.size()) {
    throw CompileError(what + ": " + std::to_string(outputs.is_array() ? outputs.size() : 0) +
                       " outputs, but " + schema.op.str() + " returns " +
                       std::to_string(schema.returns.size()));
  }
  std::vector<std::optional<ir::NewValue>> values;
  auto add = [&](const Json& tensor_arg) {
    const std::string name = json_string(member(tensor_arg, "name", what), what);
    values.push_back(ir::NewValue{name, spec_of(name)});
  };
  for (const Json& output : outputs) {
    auto [kind, value] = union_member(output, what + " output");
    if (kind == "as_tensor") {
      add(*value);
    } else if (kind == "as_none") {
      values.push_back(std::nullopt);
    } else if (kind == "as_tensors") {
      if (!value->is_array()) throw CompileError(what + ": as_tensors output is not a list");
      for (const Json& t : *value) add(t);  // Tensor[] returns are flattened
    } else if (kind.starts_with("as_sym_")) {
      throw_symbolic(what, "it returns a symbolic " + kind.substr(7));
    } else {
      throw CompileError(what + ": output of kind '" + kind + "' is not supported");
    }
  }
  return values;
}

void Loader::read_outputs(const Json& signature) {
  const Json& specs = member(signature, "output_specs", where_);
  if (!specs.is_array()) throw CompileError(where_ + ": output_specs is not a list");
  std::vector<ir::ValueId> outputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string what = where_ + ": output " + std::to_string(i);
    auto [kind, spec] = union_member(specs[i], what);
    const Json& arg = member(*spec, "arg", what);
    if (kind == "user_output") {
      auto [arg_kind, tensor] = union_member(arg, what);
      if (arg_kind != "as_tensor") {
        throw CompileError(what + " is " + arg_kind + " " + tensor->dump() +
                           "; pteron programs return tensors only");
      }
      outputs.push_back(lookup(json_string(member(*tensor, "name", what), what), what));
    } else if (kind == "buffer_mutation") {
      const std::string buffer = json_string(member(*spec, "buffer_name", what), what);
      ir::ValueId target = ir::kNoValue;
      for (ir::ValueId c : graph_.states()) {
        if (graph_.value(c).initial->fqn == buffer) target = c;
      }
      if (target == ir::kNoValue) {
        throw CompileError(what + " mutates unknown buffer '" + buffer + "'");
      }
      add_mutation(target, arg, "buffer '" + buffer + "'", what);
    } else if (kind == "user_input_mutation") {
      // The program writes the new value back into the input's memory after each run.
      const std::string input = json_string(member(*spec, "user_input_name", what), what);
      const ir::ValueId target = lookup(input, what);
      if (!graph_.value(target).is_input())
        throw CompileError(what + " mutates '" + input + "', which is not an input");
      add_mutation(target, arg, "input '" + input + "'", what);
    } else if (kind == "token") {
      continue;  // the last effect's token: nothing to return
    } else {
      throw CompileError(what + " is a " + kind + " output, which pteron does not support");
    }
  }
  graph_.set_outputs(std::move(outputs));
}

// How the model's nested arguments and results flatten (torch's treespec_dumps JSON of the
// top-level module's (args, kwargs) and of its result), kept as text for the program's
// container metadata, as ExecuTorch's emitter writes it. Optional: an archive without them
// compiles to a program that takes its inputs flat.
void Loader::read_pytree_specs(const Json& module) {
  auto it = module.find("module_call_graph");
  if (it == module.end() || !it->is_array()) return;
  for (const Json& entry : *it) {
    if (!entry.is_object() || entry.value("fqn", std::string("?")) != "") continue;
    auto signature = entry.find("signature");
    if (signature == entry.end() || !signature->is_object()) return;
    for (const auto& [field, key] :
         {std::pair{"in_spec", kInputPytreeSpec}, std::pair{"out_spec", kOutputPytreeSpec}}) {
      auto spec = signature->find(field);
      if (spec != signature->end() && spec->is_string()) graph_.metadata()[key] = *spec;
    }
    return;
  }
}

void Loader::add_mutation(ir::ValueId target, const Json& arg, const std::string& target_what,
                          const std::string& what) {
  const ir::ValueId value = lookup(json_string(member(arg, "name", what), what), what);
  const ir::TensorSpec& old_spec = graph_.value(target).spec;
  const ir::TensorSpec& new_spec = graph_.value(value).spec;
  if (old_spec.dtype != new_spec.dtype || old_spec.sizes != new_spec.sizes) {
    throw CompileError(what + " writes " + ir::to_string(new_spec) + " to " + target_what +
                       ", which is " + ir::to_string(old_spec));
  }
  graph_.add_buffer_mutation({target, value});
}

}  // namespace detail

ir::Graph load_pt2(const std::string& path, const LoadOptions& options) {
  return detail::Loader(Pt2Archive::open(path), options).load();
}

}  // namespace pteron::compiler::frontend
