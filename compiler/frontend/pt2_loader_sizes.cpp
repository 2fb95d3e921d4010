// The loader's reading of what torch.export writes about symbolic sizes and values: export's
// guards on sizes (_assert_scalar over comparisons), data-dependent output lengths (unbacked
// SymInts), sizes and checked values read with item(), and a view's data-dependent storage
// offset. Conditions the bounds do not imply become pteron::check_size nodes.
#include "compiler/frontend/pt2_loader_class.h"

namespace pteron::compiler::frontend::detail {

bool Loader::read_size_guard(const std::string& target, const Json& node,
                             const ir::DebugHandle& debug, const std::string& what) {
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
  if (!it->second.implied) add_size_check(it->second, message.empty() ? condition : message, debug);
  return true;
}

bool Loader::read_storage_offset(const std::string& target, const Json& node,
                                 const std::string& what) {
  if (target != "torch.ops.aten.sym_storage_offset.default") return false;
  const Json& outputs = member(node, "outputs", what);
  if (outputs.is_array() && outputs.size() == 1 && outputs[0].is_object() &&
      outputs[0].contains("as_sym_int")) {
    storage_offsets_.insert(
        json_string(member(outputs[0]["as_sym_int"], "as_name", what), what + " output"));
  }
  return true;
}

bool Loader::is_storage_offset(const std::string& kind, const Json& arg) const {
  return kind == "as_sym_int" && arg.is_object() && arg.contains("as_name") &&
         arg["as_name"].is_string() && storage_offsets_.count(arg["as_name"].get<std::string>());
}

void Loader::add_size_check(const SizeGuard& guard, const std::string& message,
                            const ir::DebugHandle& debug) {
  static const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(ops::pteron::check_size);
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

bool Loader::read_item_size(const std::string& target, const Json& node,
                            const ir::DebugHandle& debug, const std::string& what) {
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

ir::ValueId Loader::item_tensor(const Json& node, const std::string& what) {
  const Json& inputs = member(node, "inputs", what);
  if (!inputs.is_array() || inputs.size() != 1) throw CompileError(what + ": malformed item()");
  auto [arg_kind, arg] = union_member(member(inputs[0], "arg", what), what);
  if (arg_kind != "as_tensor") throw CompileError(what + ": malformed item()");
  return lookup(json_string(member(*arg, "name", what), what), what);
}

bool Loader::read_checked_flag(const Json& node, const std::string& what) {
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

bool Loader::read_flag_as_int(const std::string& target, const Json& node,
                              const std::string& what) {
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
  sym_values_[json_string(member(outputs[0]["as_sym_int"], "as_name", what), what)] = flag->second;
  return true;
}

bool Loader::guards_unsound_torch_max(const std::string& cmp, const ir::SymExpr& lhs,
                                      const ir::SymExpr& rhs) const {
  const bool upper = cmp == "le" || cmp == "ge";
  const ir::SymExpr& sym = cmp == "le" ? lhs : rhs;
  const ir::SymExpr& bound = cmp == "le" ? rhs : lhs;
  if (!upper || sym.op != ir::SymExpr::Op::Symbol || !bound.is_constant()) return false;
  auto it = unsound_torch_max_.find(sym.symbol);
  return it != unsound_torch_max_.end() && it->second == bound.value;
}

std::optional<int64_t> Loader::torch_min(const std::string& symbol) const {
  auto it = torch_min_.find(symbol);
  return it == torch_min_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

void Loader::bound_summands(const ir::SymExpr& sum, const ir::SymExpr& bounded) {
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

void Loader::bound_data_dependent_sizes(const Json& node, const std::string& op,
                                        const std::vector<ir::Argument>& args,
                                        const std::string& what) {
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

void Loader::bind_data_dependent_sizes(ir::NodeId id) {
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

}  // namespace pteron::compiler::frontend::detail
