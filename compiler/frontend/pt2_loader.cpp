#include "compiler/frontend/pt2_loader.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>

#include "compiler/compile_error.h"
#include "compiler/frontend/argument_reader.h"
#include "compiler/frontend/constant_reader.h"
#include "compiler/frontend/debug_info.h"
#include "compiler/frontend/export_json.h"
#include "compiler/frontend/pt2_archive.h"
#include "compiler/frontend/unbacked_sizes.h"
#include "compiler/frontend/value_checks.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler::frontend {
namespace {

constexpr int kSchemaMajor = 8;  // torch 2.13 writes schema version 8.x

class Loader {
 public:
  Loader(Pt2Archive archive, LoadOptions options)
      : archive_(std::move(archive)), options_(std::move(options)) {}

  ir::Graph load() {
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
      value_checks_ = find_value_checks(member(graph, "nodes", where_), *tensor_values_);
      read_symbols(graph);
      PayloadConfigs configs(archive_, options_.model_name);
      read_inputs(member(module, "signature", where_), graph, configs);
      const Json& nodes = member(graph, "nodes", where_);
      if (!nodes.is_array()) throw CompileError(where_ + ": 'nodes' is not a list");
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (!value_checks_.nodes.count(i)) read_node(nodes[i], static_cast<int>(i));
      }
      read_outputs(member(module, "signature", where_));
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
      for (const std::string& s : value_checks_.sources)
        sources += (sources.empty() ? "" : ", ") + s;
      graph_.metadata()[kUncheckedValueChecks] = sources;
    }
    graph_.verify();
    return std::move(graph_);
  }

 private:
  // ---- Archive layout and versions --------------------------------------------------------

  void check_layout() {
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

  [[noreturn]] void missing_model(const std::string& entry) {
    std::string models;
    for (const std::string& name : archive_.entries()) {
      if (name.starts_with("models/") && name.ends_with(".json")) {
        models += (models.empty() ? "" : ", ") + name.substr(7, name.size() - 12);
      }
    }
    throw CompileError(archive_.path() + ": missing entry " + archive_.full_name(entry) +
                       (models.empty() ? "" : " (the archive has models: " + models + ")"));
  }

  void check_version() {
    const Json& version = member(model_, "schema_version", where_);
    const int64_t major = json_int(member(version, "major", where_), where_ + " schema_version");
    const int64_t minor = json_int(member(version, "minor", where_), where_ + " schema_version");
    std::string torch_version = "<=2.4";  // what torch assumes when the field is absent
    if (auto it = model_.find("torch_version"); it != model_.end() && it->is_string()) {
      torch_version = it->get<std::string>();
    }
    const std::string version_text = std::to_string(major) + "." + std::to_string(minor);
    if (major != kSchemaMajor) {
      throw CompileError(where_ + ": export schema version " + version_text +
                         " (written by torch " + torch_version + ") is not supported; pteron " +
                         "reads schema version 8 (torch 2.13): re-export with torch 2.13");
    }
    graph_.metadata()["torch_version"] = torch_version;
    graph_.metadata()["schema_version"] = version_text;
  }

  // Bounded dynamic shapes: the symbols' ranges (range_constraints) and the named SymInts'
  // expressions (sym_int_values). Symbolic floats are refused; symbolic bools are the
  // comparisons export's size guards test (read_size_guard).
  void read_symbols(const Json& graph) {
    if (auto it = graph.find("sym_float_values"); it != graph.end() && it->is_object()) {
      for (const auto& [name, value] : it->items()) {  // left-out value checks' scalars: never read
        if (!value_checks_.symbols.count(name))
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
        info.max =
            hi.is_number_integer() && hi.get<int64_t>() <= INT32_MAX ? hi.get<int64_t>() : -1;
        if (info.max >= 0 && info.max < info.min)
          throw CompileError(what + ": max " + std::to_string(info.max) + " is below min " +
                             std::to_string(info.min));
        graph_.symbols()[name] = info;
      }
    }
    if (auto it = graph.find("sym_int_values"); it != graph.end() && it->is_object()) {
      for (const auto& [name, value] : it->items()) {
        if (value_checks_.symbols.count(name)) continue;    // a left-out value check's
        if (value_checks_.flag_ints.count(name)) continue;  // read_flag_as_int gives it
        sym_values_[name] = read_sym_int(value, where_ + ": SymInt '" + name + "'");
      }
    }
  }

  // A named SymInt used as an argument: its expression, every symbol of which must be a
  // dimension of a user input (where the runtime reads it).
  // `bounded`: refuse a symbol without a max (a guard may read one: it is checked at run time).
  ir::SymExprPtr sym_int_named(const std::string& name, const std::string& what,
                               bool bounded = true) {
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

  // A dimension of a user input and the symbol it gives: the dimension is
  // scale * symbol + offset.
  struct InputSymbol {
    ir::AffineSymbol size;  // the dimension is size.scale * size.symbol + size.offset
    int32_t dim;
  };

  // The symbols that dimensions of `input` give (a whole dimension, or a derived dim's root);
  // refuses an unbounded one by name.
  std::vector<InputSymbol> input_symbols(const std::string& input, const std::string& what) {
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

  // ---- Values -------------------------------------------------------------------------------

  ir::TensorSpec spec_of(const std::string& name) {
    auto it = tensor_values_->find(name);
    if (it == tensor_values_->end()) {
      throw CompileError(where_ + ": tensor '" + name + "' has no entry in tensor_values");
    }
    const ir::SymbolTable* symbols = graph_.symbols().empty() ? nullptr : &graph_.symbols();
    return read_tensor_meta(*it, where_ + ": tensor '" + name + "'", symbols).spec();
  }

  ir::ValueId lookup(const std::string& name, const std::string& what) const {
    if (auto id = graph_.find_value(name)) return *id;
    throw CompileError(what + " refers to tensor '" + name +
                       "', which is not defined before this node");
  }

  void read_inputs(const Json& signature, const Json& graph, const PayloadConfigs& configs) {
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
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string what = where_ + ": input " + std::to_string(i);
      auto [kind, spec] = union_member(specs[i], what);
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
                                               : kind == "buffer"
                                                   ? ir::ConstantKind::Buffer
                                                   : ir::ConstantKind::TensorConstant;
        const std::string name =
            json_string(member(member(*spec, "arg", what), "name", what), what);
        const std::string fqn = json_string(member(*spec, fqn_key, what), what);
        ConstantTensor c = read_constant(archive_, configs, fqn, constant_kind);
        if (kind == "buffer")
          c.data.persistent = json_bool(member(*spec, "persistent", what), what);
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
        continue;  // a Python scalar export specialised; nodes carry its value literally
      } else if (kind == "token") {
        continue;  // orders effectful calls (with_effects); pteron runs nodes in graph order
      } else {
        throw CompileError(what + " is a " + kind + " input, which pteron does not support");
      }
    }
  }

  // ---- Nodes --------------------------------------------------------------------------------

  void read_node(const Json& node, int index) {
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
            return wrap_scalar(s, float_type, debug.node_name, arg_name);
          },
          [&](const ir::SymExprPtr& e) { return wrap_sym_int(e, debug, arg_name); },
          [&](const std::string& n) {
            return sym_int_named(n, arg_what, ir::sym_arg_needs_bound(schema, i));
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
    const ir::NodeId id = graph_.add_node(schema, std::move(filled),
                                          read_node_outputs(node, schema, what), std::move(debug));
    bind_data_dependent_sizes(id);
  }

  // ---- Effects ------------------------------------------------------------------------------

  // with_effects(token, op, args...): export's wrapping of an op with side effects. The one
  // pteron runs is linalg's error check, _linalg_check_errors(info, api_name): torch.linalg.inv,
  // cholesky, solve and lu_factor raise when their *_ex op reports a singular or not
  // positive-definite input. It becomes that op's check_errors argument, so its kernel fails the
  // call with the reason, as torch raises.
  void read_effect(const Json& node, const std::string& what) {
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

  // ---- Data-dependent sizes (unbacked SymInts) ----------------------------------------------

  // A comparison of sizes export guards with: whether the bounds imply it, and what it compares.
  struct SizeGuard {
    bool implied = false;
    std::string cmp;  // Python's operator name: ge, gt, le, lt, eq, ne
    ir::SymExprPtr lhs, rhs;
  };
  static inline const std::set<std::string> kComparisons = {"ge", "gt", "le", "lt", "eq", "ne"};

  // Export's guards on sizes: comparisons (_operator.ge, ...) defining symbolic bools, and
  // _assert_scalar / sym_constrain_range* nodes over them. A guard the symbols' bounds imply
  // is dropped (the plan is at the bound, and kernels refuse sizes beyond their out's); any
  // other (torch._check on a data-dependent length, a view's divisibility, two selections
  // asserted equal) becomes a pteron::check_size node, which fails the call with export's
  // message when the condition does not hold. True when `node` was such a guard.
  bool read_size_guard(const std::string& target, const Json& node, const ir::DebugHandle& debug,
                       const std::string& what) {
    if (target == "torch.ops.aten.sym_constrain_range_for_size.default" ||
        target == "torch.ops.aten.sym_constrain_range.default") {
      return true;  // the range is in range_constraints, which the bounds come from
    }
    const Json& outputs = node.contains("outputs") ? node["outputs"] : Json();
    if (target.starts_with("_operator.") && outputs.is_array() && outputs.size() == 1 &&
        outputs[0].is_object() && outputs[0].contains("as_sym_bool")) {
      const std::string name =
          json_string(member(outputs[0]["as_sym_bool"], "as_name", what), what + " output");
      const Json& inputs = member(node, "inputs", what);
      if (!inputs.is_array() || inputs.size() != 2) throw_symbolic(what, "size comparison");
      ir::SymExprPtr operands[2];
      for (size_t i = 0; i < 2; ++i) {
        auto [kind, v] = union_member(member(inputs[i], "arg", what), what);
        if (is_storage_offset(kind, *v)) {
          // torch's guard of a view's offset into its storage, which pteron does not keep:
          // nothing of the model's to check.
          size_guards_[name] = {true, "eq", ir::SymExpr::constant(0), ir::SymExpr::constant(0)};
          return true;
        }
        if (kind == "as_int") {
          operands[i] = ir::SymExpr::constant(json_int(*v, what));
        } else if (kind == "as_sym_int") {
          auto [sym_kind, sym] = union_member(*v, what);
          operands[i] = sym_kind == "as_name"
                            ? sym_int_named(json_string(*sym, what), what, /*bounded=*/false)
                            : read_sym_int(*v, what);
        } else {
          throw_symbolic(what, "comparison of a " + kind);
        }
      }
      const std::string cmp = target.substr(std::strlen("_operator."));
      if (!kComparisons.contains(cmp)) throw_symbolic(what, "size comparison " + cmp);
      if (cmp == "eq") {
        bound_summands(*operands[0], *operands[1]);
        bound_summands(*operands[1], *operands[0]);
      }
      // An item() size with no max yet implies nothing: the guard is checked at run time.
      const bool implied = guards_unsound_torch_max(cmp, *operands[0], *operands[1]) ||
                           (is_bounded(*operands[0]) && is_bounded(*operands[1]) &&
                            always_holds(cmp, *operands[0], *operands[1], graph_.symbols(), what));
      size_guards_[name] = {implied, cmp, operands[0], operands[1]};
      return true;
    }
    if (target != "torch.ops.aten._assert_scalar.default") return false;
    std::string condition, message;
    for (const Json& input : member(node, "inputs", what)) {
      auto [kind, v] = union_member(member(input, "arg", what), what);
      if (kind == "as_sym_bool") {
        auto [k, name] = union_member(*v, what);
        if (k == "as_name") condition = json_string(*name, what);
      } else if (kind == "as_string") {
        message = json_string(*v, what);
      }
    }
    if (auto flag = flags_.find(condition); flag != flags_.end()) {
      add_size_check({false, "eq", flag->second, ir::SymExpr::constant(1)},
                     message.empty() ? condition : message, debug);
      return true;
    }
    auto it = size_guards_.find(condition);
    if (it == size_guards_.end()) {
      throw CompileError(what + ": a run-time check of a condition pteron cannot evaluate (" +
                         (message.empty() ? condition : message) + ")");
    }
    if (!it->second.implied)
      add_size_check(it->second, message.empty() ? condition : message, debug);
    return true;
  }

  // sym_storage_offset of a view whose offset is data-dependent (x[k:] for k = n.item()): its
  // symbol is recorded so that export's guards of it are dropped (read_size_guard). True when
  // `node` was one.
  bool read_storage_offset(const std::string& target, const Json& node, const std::string& what) {
    if (target != "torch.ops.aten.sym_storage_offset.default") return false;
    const Json& outputs = member(node, "outputs", what);
    if (outputs.is_array() && outputs.size() == 1 && outputs[0].is_object() &&
        outputs[0].contains("as_sym_int")) {
      storage_offsets_.insert(
          json_string(member(outputs[0]["as_sym_int"], "as_name", what), what + " output"));
    }
    return true;
  }

  bool is_storage_offset(const std::string& kind, const Json& arg) const {
    return kind == "as_sym_int" && arg.is_object() && arg.contains("as_name") &&
           arg["as_name"].is_string() && storage_offsets_.count(arg["as_name"].get<std::string>());
  }

  // A pteron::check_size node for `guard`, reading its sizes from the tensors they are
  // dimensions of (which also orders it after them).
  void add_size_check(const SizeGuard& guard, const std::string& message,
                      const ir::DebugHandle& debug) {
    static const ir::OpSchema* schema =
        ir::OpSchemaRegistry::global().find(ops::pteron::check_size);
    if (schema == nullptr) throw CompileError("pteron::check_size is not in the operator table");
    std::vector<ir::ValueId> sources;
    std::function<void(const ir::SymExpr&)> collect = [&](const ir::SymExpr& e) {
      if (e.op == ir::SymExpr::Op::Symbol) {
        const ir::ValueId v = graph_.symbols().at(e.symbol).input;
        if (std::find(sources.begin(), sources.end(), v) == sources.end()) sources.push_back(v);
      }
      for (const ir::SymExprPtr& o : e.operands) collect(*o);
    };
    collect(*guard.lhs);
    collect(*guard.rhs);
    const auto sym_arg = [](const ir::SymExprPtr& e) {
      return e->is_constant() ? ir::Argument(e->value) : ir::Argument(ir::SymInt{e});
    };
    std::vector<ir::Argument> args = {ir::Argument(ir::TensorList{sources}), sym_arg(guard.lhs),
                                      sym_arg(guard.rhs), ir::Argument(guard.cmp),
                                      ir::Argument(message)};
    graph_.add_node(*schema, std::move(args), {}, debug);
  }

  // A size from a tensor's value (`x[:n.item()]`, split sizes from `counts.tolist()`):
  // _local_scalar_dense of a one-element integer tensor defining an unbacked symbol. Its range
  // (a torch._check in the model) is where memory is planned, so it must have a max; it is an
  // assumption about the data, so the program checks it right after reading the value
  // (pteron::check_size), and export's own guards of it are then implied. A value only checked
  // (frontend/value_checks.h) plans nothing: every assert on it is checked as export wrote it.
  // True when `node` was such a read.
  bool read_item_size(const std::string& target, const Json& node, const ir::DebugHandle& debug,
                      const std::string& what) {
    if (target != "torch.ops.aten._local_scalar_dense.default") return false;
    const Json& outputs = member(node, "outputs", what);
    if (!outputs.is_array() || outputs.size() != 1 || !outputs[0].is_object()) return false;
    if (outputs[0].contains("as_sym_bool")) return read_checked_flag(node, what);
    if (!outputs[0].contains("as_sym_int")) return false;
    auto [kind, name] = union_member(outputs[0]["as_sym_int"], what + " output");
    const std::string output = kind == "as_name" ? json_string(*name, what) : "";
    auto value = sym_values_.find(output);
    if (value == sym_values_.end() || value->second->op != ir::SymExpr::Op::Symbol)
      throw_symbolic(what, "Tensor.item() that is not a plain symbol");
    const std::string symbol = value->second->symbol;
    const ir::ValueId tensor = item_tensor(node, what);
    const ir::TensorSpec& spec = graph_.value(tensor).spec;
    if (!is_item_integer(spec.dtype) || spec.is_dynamic() || spec.numel() != 1)
      throw CompileError(what + ": item() of a " + ir::dtype_name(spec.dtype) + " " +
                         ir::shape_str(spec.sizes) +
                         " tensor gives a size; pteron reads sizes from one-element integer "
                         "tensors");
    ir::SymbolInfo& info = graph_.symbols()[symbol];
    info.input = tensor;
    info.from_value = true;
    if (value_checks_.enforced.count(output)) {
      // Its range came from the asserts themselves: none is implied by it.
      info.max = -1;
      checked_only_.insert(symbol);
      return true;
    }
    // Without a max yet, a later guard may give one (bound_summands); a use before that is
    // refused (ir::sym_bounds names the symbol and the torch._check that bounds it).
    const ir::SymExprPtr sym = ir::SymExpr::sym(symbol);
    if (const std::optional<int64_t> min = torch_min(symbol)) {
      add_size_check(
          {false, "ge", sym, ir::SymExpr::constant(*min)},
          symbol + " = item() must be at least " + std::to_string(*min) + ", as the model assumes",
          debug);
    }
    if (info.max >= 0) {
      add_size_check({false, "le", sym, ir::SymExpr::constant(info.max)},
                     symbol + " = item() must be at most " + std::to_string(info.max) +
                         ", the bound the program was planned for",
                     debug);
    }
    return true;
  }

  // The one-element tensor an item() (_local_scalar_dense) reads.
  ir::ValueId item_tensor(const Json& node, const std::string& what) {
    const Json& inputs = member(node, "inputs", what);
    if (!inputs.is_array() || inputs.size() != 1) throw CompileError(what + ": malformed item()");
    auto [arg_kind, arg] = union_member(member(inputs[0], "arg", what), what);
    if (arg_kind != "as_tensor") throw CompileError(what + ": malformed item()");
    return lookup(json_string(member(*arg, "name", what), what), what);
  }

  // A checked bool tensor's value (torch._check_tensor_all: _is_all_true, then item()): a
  // symbol in [0, 1] read like an item() size. Export has already folded the flag to true
  // wherever it is used (the check assumed it), so its sym_ite(flag, 1, 0) and direct asserts
  // are read as that symbol instead (read_flag_as_int, read_size_guard). True when read.
  bool read_checked_flag(const Json& node, const std::string& what) {
    const std::string flag =
        json_string(member(member(node, "outputs", what)[0]["as_sym_bool"], "as_name", what), what);
    if (!value_checks_.enforced.count(flag)) return false;
    const ir::ValueId tensor = item_tensor(node, what);
    const ir::TensorSpec& spec = graph_.value(tensor).spec;
    if (spec.dtype != ir::ScalarType::Bool || spec.is_dynamic() || spec.numel() != 1)
      throw CompileError(what + ": a checked item() of a " + ir::dtype_name(spec.dtype) + " " +
                         ir::shape_str(spec.sizes) + " tensor; pteron checks one-element ones");
    std::string symbol = flag;
    while (graph_.symbols().count(symbol)) symbol += "_";
    ir::SymbolInfo& info = graph_.symbols()[symbol];
    info = ir::SymbolInfo{};
    info.max = 1;
    info.input = tensor;
    info.from_value = true;
    checked_only_.insert(symbol);
    flags_[flag] = ir::SymExpr::sym(symbol);
    return true;
  }

  // sym_ite(flag, 1, 0) of a checked flag (the only form value_checks keeps): the flag's symbol.
  bool read_flag_as_int(const std::string& target, const Json& node, const std::string& what) {
    if (target != "torch.sym_ite") return false;
    const Json& inputs = member(node, "inputs", what);
    if (!inputs.is_array() || inputs.empty()) return false;
    auto [kind, v] = union_member(member(inputs[0], "arg", what), what);
    if (kind != "as_sym_bool" || !v->is_object() || !v->contains("as_name")) return false;
    auto flag = flags_.find(json_string((*v)["as_name"], what));
    if (flag == flags_.end()) return false;
    const Json& outputs = member(node, "outputs", what);
    if (!outputs.is_array() || outputs.size() != 1 || !outputs[0].is_object() ||
        !outputs[0].contains("as_sym_int"))
      throw CompileError(what + ": malformed sym_ite");
    sym_values_[json_string(member(outputs[0]["as_sym_int"], "as_name", what), what)] =
        flag->second;
    return true;
  }

  // Whether `lhs cmp rhs` is export's guard of a data-dependent length at torch's own range
  // where that range is below what the operator can give (u0 <= 20 for masked_select of a
  // 20-element self under a broadcast mask): left out, as eager never checks it.
  bool guards_unsound_torch_max(const std::string& cmp, const ir::SymExpr& lhs,
                                const ir::SymExpr& rhs) const {
    const bool upper = cmp == "le" || cmp == "ge";
    const ir::SymExpr& sym = cmp == "le" ? lhs : rhs;
    const ir::SymExpr& bound = cmp == "le" ? rhs : lhs;
    if (!upper || sym.op != ir::SymExpr::Op::Symbol || !bound.is_constant()) return false;
    auto it = unsound_torch_max_.find(sym.symbol);
    return it != unsound_torch_max_.end() && it->second == bound.value;
  }

  // The lower bound torch's range_constraints give `symbol`, unclamped; nullopt when none.
  std::optional<int64_t> torch_min(const std::string& symbol) const {
    auto it = torch_min_.find(symbol);
    return it == torch_min_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  // `sum == bounded`, where `sum` adds item() sizes of no max and terms that are never negative
  // (split sizes from counts.tolist(), which export asserts add up to the dim): each unbounded
  // term is at most the bounded side's max, once the program has checked the equality and every
  // term's lower bound (kernels refuse sizes past their planned bounds before that).
  void bound_summands(const ir::SymExpr& sum, const ir::SymExpr& bounded) {
    std::vector<const ir::SymExpr*> terms;
    if (sum.op == ir::SymExpr::Op::Add) {
      for (const ir::SymExprPtr& o : sum.operands) terms.push_back(o.get());
    } else {
      terms.push_back(&sum);
    }
    std::vector<ir::SymbolInfo*> unbounded;
    for (const ir::SymExpr* t : terms) {
      if (t->op != ir::SymExpr::Op::Symbol) return;
      if (checked_only_.count(t->symbol)) return;  // never a size: nothing to bound
      ir::SymbolInfo& info = graph_.symbols()[t->symbol];
      // An item() term is non-negative only where the program checks it (torch's min >= 0).
      if (info.from_value && torch_min(t->symbol).value_or(-1) < 0) return;
      if (info.max < 0) {
        if (!info.from_value) return;
        unbounded.push_back(&info);
      }
    }
    if (unbounded.empty() || !is_bounded(bounded)) return;
    const int64_t hi = ir::sym_bounds(bounded, graph_.symbols(), "an asserted sum of sizes").hi;
    for (ir::SymbolInfo* info : unbounded) info->max = std::max(hi, info->min);
  }

  bool is_bounded(const ir::SymExpr& e) const { return ir::is_bounded(e, graph_.symbols()); }

  // An output size torch cannot know before running (u0 of nonzero) needs an upper bound to
  // plan memory at: a torch._check in the model tighter than the operator's own bound, else the
  // operator's (nonzero: the input's numel), else range_constraints' max; without one the node
  // is refused. Other guards (a lower bound, torch's own unsound max for a broadcast
  // masked_select) are checked at run time (read_size_guard), as torch's exported program
  // checks them.
  void bound_data_dependent_sizes(const Json& node, const std::string& op,
                                  const std::vector<ir::Argument>& args, const std::string& what) {
    const Json& outputs = member(node, "outputs", what);
    const DataDependentRange range = data_dependent_range(op, args, graph_);
    for (const Json& output : outputs) {
      auto [kind, value] = union_member(output, what + " output");
      if (kind != "as_tensor") continue;
      const std::string name = json_string(member(*value, "name", what), what);
      auto meta = tensor_values_->find(name);
      if (meta == tensor_values_->end()) continue;
      for (const Json& size : member(*meta, "sizes", what)) {
        ir::SymExprPtr e = read_sym_int(size, what);
        if (e->op != ir::SymExpr::Op::Symbol) continue;
        ir::SymbolInfo& info = graph_.symbols()[e->symbol];
        if (info.input != ir::kNoValue) continue;  // an input's size, read there
        if (info.max < 0 && !range.max)
          throw CompileError(what + ": output '" + name + "' has the data-dependent size " +
                             e->symbol + ", which has no upper bound (pteron plans memory at " +
                             "the bound: torch._check(" + e->symbol + " <= N) in the model " +
                             "gives one)");
        // A tighter max is a torch._check in the model, planned at (the kernel refuses a longer
        // result), unless it is torch's own unsound one (masked_select's): then the operator's
        // bound wins, and export's guard of that range is torch's error, not the model's
        // condition (unsound_torch_max_).
        const bool checked = range.max && info.max >= 0 && info.max < *range.max;
        if (checked && info.max == range.unsound_torch_max) {
          unsound_torch_max_[e->symbol] = info.max;
          info.max = *range.max;
        } else if (range.max && !checked) {
          info.max = *range.max;
        }
        // torch's lower bound for it is an assumption (guards relying on it are checked at run
        // time: read_size_guard); the operator's own holds.
        info.min = range.min;
      }
    }
  }

  // A data-dependent size is read at run time from the first output dimension it is, once the
  // node producing it has run (the program emitter places the read after that node).
  void bind_data_dependent_sizes(ir::NodeId id) {
    for (ir::ValueId v : graph_.node(id).outputs) {
      if (v == ir::kNoValue) continue;
      const ir::TensorSpec& spec = graph_.value(v).spec;
      for (size_t d = 0; d < spec.sym_sizes.size(); ++d) {
        const ir::SymExpr* e = spec.sym_size(d);
        if (e == nullptr || e->op != ir::SymExpr::Op::Symbol) continue;
        auto it = graph_.symbols().find(e->symbol);
        if (it == graph_.symbols().end() || it->second.input != ir::kNoValue) continue;
        it->second.input = v;
        it->second.dim = static_cast<int32_t>(d);
      }
    }
  }

  // sym_size, sym_numel and Python arithmetic on SymInts: every SymInt they define is in
  // sym_int_values as an expression over the input symbols, which is what arguments use.
  static bool is_sym_int_op(const std::string& target, const Json& node) {
    const bool sym_target = target == "torch.ops.aten.sym_size.int" ||
                            target == "torch.ops.aten.sym_numel.default" ||
                            is_symbolic_arithmetic(target);
    if (!sym_target) return false;
    const Json* outputs = node.contains("outputs") ? &node["outputs"] : nullptr;
    if (outputs == nullptr || !outputs->is_array() || outputs->size() != 1) return false;
    return (*outputs)[0].is_object() && (*outputs)[0].contains("as_sym_int");
  }

  // The dtype torch gives a Python float in a tensor position: the default dtype (f32), or
  // f64 when the node already computes in f64 (so the scalar keeps its precision).
  ir::ScalarType wrapped_float_type(const Json& inputs, const std::string& what) {
    for (const Json& input : inputs) {
      auto arg = input.find("arg");
      if (arg == input.end() || !arg->is_object() || !arg->contains("as_tensor")) continue;
      const Json& name = (*arg)["as_tensor"].value("name", Json());
      if (!name.is_string()) continue;
      auto id = graph_.find_value(name.get<std::string>());
      if (id && graph_.value(*id).spec.dtype == ir::ScalarType::Double)
        return ir::ScalarType::Double;
    }
    return ir::ScalarType::Float;
  }

  ir::ValueId wrap_scalar(const ir::Scalar& s, ir::ScalarType float_type,
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

  // torch's wrapped SymInt: aten::scalar_tensor(s, dtype=int64), run before the node reading
  // it (its Scalar argument is an Int value the program's size prologue computes).
  ir::ValueId wrap_sym_int(const ir::SymExprPtr& e, const ir::DebugHandle& debug,
                           const std::string& arg_name) {
    static const ir::OpSchema* schema =
        ir::OpSchemaRegistry::global().find(ops::aten::scalar_tensor);
    if (schema == nullptr) throw CompileError("aten::scalar_tensor is not in the operator table");
    std::vector<ir::Argument> args = {ir::Argument(ir::SymInt{e}),
                                      ir::Argument(ir::ScalarType::Long), ir::Argument(ir::None{}),
                                      ir::Argument(ir::None{}), ir::Argument(ir::None{})};
    const std::string name = graph_.unique_name(debug.node_name + "_" + arg_name);
    const ir::NodeId node = graph_.add_node(
        *schema, std::move(args),
        {ir::NewValue{name, ir::TensorSpec::contiguous(ir::ScalarType::Long, {})}}, debug);
    return graph_.node(node).outputs[0];
  }

  const ir::OpSchema& find_schema(const std::string& target, const std::string& what) {
    if (!target.starts_with("torch.ops.")) {
      if (is_symbolic_arithmetic(target)) {
        throw_symbolic(what, "Python arithmetic on sizes");
      }
      throw CompileError(what + ": unsupported call target '" + target + "'");
    }
    if (target.starts_with("torch.ops.higher_order.")) {
      throw CompileError(what + ": control flow (" + target + ") is not supported");
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

  std::vector<std::optional<ir::NewValue>> read_node_outputs(const Json& node,
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

  // ---- Outputs ------------------------------------------------------------------------------

  void read_outputs(const Json& signature) {
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
        const ir::ValueId value = lookup(json_string(member(arg, "name", what), what), what);
        const ir::TensorSpec& old_spec = graph_.value(target).spec;
        const ir::TensorSpec& new_spec = graph_.value(value).spec;
        if (old_spec.dtype != new_spec.dtype || old_spec.sizes != new_spec.sizes) {
          throw CompileError(what + " writes " + ir::to_string(new_spec) + " to buffer '" + buffer +
                             "', which is " + ir::to_string(old_spec));
        }
        graph_.add_buffer_mutation({target, value});
      } else if (kind == "user_input_mutation") {
        const std::string input = json_string(member(*spec, "user_input_name", what), what);
        throw CompileError(what + ": the model writes into its input '" + input +
                           "' in place; pteron programs keep state in buffers, not inputs "
                           "(register a buffer, or clone the input before changing it)");
      } else if (kind == "token") {
        continue;  // the last effect's token: nothing to return
      } else {
        throw CompileError(what + " is a " + kind + " output, which pteron does not support");
      }
    }
    graph_.set_outputs(std::move(outputs));
  }

  Pt2Archive archive_;
  LoadOptions options_;
  std::string where_;
  Json model_;
  const Json* tensor_values_ = nullptr;
  std::unordered_map<std::string, ir::SymExprPtr> sym_values_;
  std::unordered_map<std::string, SizeGuard> size_guards_;  // by symbolic bool name
  // Data-dependent lengths whose torch range is below the operator's bound: torch's max.
  std::unordered_map<std::string, int64_t> unsound_torch_max_;
  // range_constraints' integer min_val per symbol, before read_symbols clamps it at 0.
  std::unordered_map<std::string, int64_t> torch_min_;
  // Values only checked at run time (frontend/value_checks.h): their symbols, and the symbol of
  // each checked bool by the SymBool name export gave it.
  std::set<std::string> checked_only_;
  std::set<std::string> storage_offsets_;  // SymInt names sym_storage_offset defines
  std::unordered_map<std::string, ir::SymExprPtr> flags_;
  ValueChecks value_checks_;  // run-time checks on tensor values, left out
  ir::Graph graph_;
};

}  // namespace

ir::Graph load_pt2(const std::string& path, const LoadOptions& options) {
  return Loader(Pt2Archive::open(path), options).load();
}

}  // namespace pteron::compiler::frontend
