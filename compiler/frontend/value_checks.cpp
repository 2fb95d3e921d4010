#include "compiler/frontend/value_checks.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include "compiler/frontend/debug_info.h"

namespace pteron::compiler::frontend {
namespace {

// Every symbolic name ({"as_name": ...}) anywhere in `value` (arguments, lists of sizes).
void names_in(const Json& value, std::vector<std::string>& out) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (key == "as_name" && item.is_string())
        out.push_back(item.get<std::string>());
      else
        names_in(item, out);
    }
  } else if (value.is_array()) {
    for (const Json& item : value) names_in(item, out);
  }
}

// Every tensor name ({"as_tensor": {"name": ...}}, also inside lists) in `value`.
void tensors_in(const Json& value, std::vector<std::string>& out) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (key == "as_tensor" && item.is_object() && item.contains("name") &&
          item["name"].is_string())
        out.push_back(item["name"].get<std::string>());
      else
        tensors_in(item, out);
    }
  } else if (value.is_array()) {
    for (const Json& item : value) tensors_in(item, out);
  }
}

std::string target_of(const Json& node) {
  auto it = node.find("target");
  return it != node.end() && it->is_string() ? it->get<std::string>() : "";
}

// The symbolic names a node defines (its outputs' SymInts and SymBools).
std::vector<std::string> defined_names(const Json& node) {
  std::vector<std::string> out;
  if (auto it = node.find("outputs"); it != node.end()) names_in(*it, out);
  return out;
}

std::string source_of(const Json& node) {
  auto meta = node.find("metadata");
  if (meta == node.end() || !meta->is_object()) return "";
  auto trace = meta->find("stack_trace");
  return trace != meta->end() && trace->is_string()
             ? source_from_stack_trace(trace->get<std::string>())
             : "";
}

// The one output name of `node` if it is of `kind` ("as_sym_int", "as_sym_bool"), else "".
std::string scalar_output(const Json& node, const char* kind) {
  auto it = node.find("outputs");
  if (it == node.end() || !it->is_array() || it->size() != 1 || !(*it)[0].is_object()) return "";
  auto out = (*it)[0].find(kind);
  if (out == (*it)[0].end() || !out->is_object()) return "";
  auto name = out->find("as_name");
  return name != out->end() && name->is_string() ? name->get<std::string>() : "";
}

// The dtype of _local_scalar_dense's tensor, or nullopt when the node is not of that form.
std::optional<ir::ScalarType> scalar_tensor_dtype(const Json& node, const Json& tensor_values) {
  std::vector<std::string> tensors;
  if (auto it = node.find("inputs"); it != node.end()) tensors_in(*it, tensors);
  if (tensors.size() != 1 || !tensor_values.is_object()) return std::nullopt;
  auto meta = tensor_values.find(tensors[0]);
  if (meta == tensor_values.end() || !meta->is_object()) return std::nullopt;
  auto dtype = meta->find("dtype");
  if (dtype == meta->end() || !dtype->is_number_integer()) return std::nullopt;
  return scalar_type_from_export(dtype->get<int64_t>(), "the tensor of a value check");
}

// Whether the loader can evaluate the chain rooted at `root` (its scalar and the nodes computing
// from it): an integer tensor's value under integer arithmetic and comparisons, or a bool
// tensor's value read as sym_ite(b, 1, 0) (what torch._check_tensor_all gives) or asserted.
bool enforceable(const Json& nodes, size_t root, const std::set<size_t>& chain,
                 const Json& tensor_values) {
  static const std::set<std::string> kIntOps = {"add", "sub", "mul", "floordiv", "mod", "neg",
                                                "ge",  "gt",  "le",  "lt",       "eq",  "ne"};
  const std::optional<ir::ScalarType> dtype = scalar_tensor_dtype(nodes[root], tensor_values);
  if (!dtype) return false;
  const std::string value = scalar_output(nodes[root], "as_sym_int");
  const std::string flag = scalar_output(nodes[root], "as_sym_bool");
  if (!(value.empty() ? !flag.empty() && *dtype == ir::ScalarType::Bool : is_item_integer(*dtype)))
    return false;
  for (size_t n : chain) {
    if (n == root) continue;
    const std::string target = target_of(nodes[n]);
    std::vector<std::string> read;
    if (auto it = nodes[n].find("inputs"); it != nodes[n].end()) names_in(*it, read);
    const bool reads_flag = !flag.empty() && std::count(read.begin(), read.end(), flag);
    if (target == "torch.sym_ite") {
      // reads_flag: the node has inputs (names_in found the flag in them)
      const Json& in = reads_flag ? *nodes[n].find("inputs") : Json();
      const auto int_arg = [&](size_t i, int64_t v) {
        return in[i].is_object() && in[i].contains("arg") && in[i]["arg"] == Json{{"as_int", v}};
      };
      if (!reads_flag || !in.is_array() || in.size() != 3 || read.size() != 1 || !int_arg(1, 1) ||
          !int_arg(2, 0))
        return false;
    } else if (!target.starts_with("_operator.") ||
               !kIntOps.count(target.substr(std::strlen("_operator."))) || reads_flag) {
      return false;
    }
  }
  return true;
}

// Who reads each symbolic name.
std::map<std::string, std::vector<size_t>> name_readers(const Json& nodes) {
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> read;
    if (auto it = nodes[i].find("inputs"); it != nodes[i].end()) names_in(*it, read);
    for (const std::string& name : read) readers[name].push_back(i);
  }
  return readers;
}

// The name a node's input `i` refers to ({"arg": {"as_sym_bool": {"as_name": ...}}}), or "".
std::string input_name(const Json& node, size_t i) {
  auto in = node.find("inputs");
  if (in == node.end() || !in->is_array() || i >= in->size() || !(*in)[i].is_object()) return "";
  std::vector<std::string> names;
  if (auto arg = (*in)[i].find("arg"); arg != (*in)[i].end()) names_in(*arg, names);
  return names.size() == 1 ? names[0] : "";
}

// The integer constant of a node's input `i` ({"as_int": c}), or nullopt.
std::optional<int64_t> input_int(const Json& node, size_t i) {
  auto in = node.find("inputs");
  if (in == node.end() || !in->is_array() || i >= in->size() || !(*in)[i].is_object())
    return std::nullopt;
  auto arg = (*in)[i].find("arg");
  if (arg == (*in)[i].end() || !arg->is_object()) return std::nullopt;
  auto v = arg->find("as_int");
  return v != arg->end() && v->is_number_integer() ? std::optional(v->get<int64_t>())
                                                   : std::nullopt;
}

// Whether `assert_node` tests `sym_ite(flag, 1, 0) cmp c` and holds for both values of the flag:
// export's range asserts of a bool's value.
bool holds_for_any_bool(const Json& nodes, size_t assert_node, const std::string& flag,
                        const std::map<std::string, size_t>& defined_by) {
  auto def = [&](const std::string& name) -> const Json* {
    auto it = defined_by.find(name);
    return it == defined_by.end() ? nullptr : &nodes[it->second];
  };
  const Json* cmp = def(input_name(nodes[assert_node], 0));
  if (cmp == nullptr) return false;
  const std::string op = target_of(*cmp);
  const std::optional<int64_t> c = input_int(*cmp, 1);
  const Json* ite = def(input_name(*cmp, 0));
  if (!op.starts_with("_operator.") || !c || ite == nullptr || target_of(*ite) != "torch.sym_ite" ||
      input_name(*ite, 0) != flag || input_int(*ite, 1) != 1 || input_int(*ite, 2) != 0)
    return false;
  const std::string name = op.substr(std::strlen("_operator."));
  for (int64_t v : {0, 1}) {
    const bool holds = name == "ge"   ? v >= *c
                       : name == "gt" ? v > *c
                       : name == "le" ? v <= *c
                       : name == "lt" ? v < *c
                       : name == "eq" ? v == *c
                       : name == "ne" ? v != *c
                                      : false;
    if (!holds) return false;
  }
  return true;
}

// An ATen (or other library) op on tensors: not control flow, not an assert.
bool is_tensor_op(const std::string& target) {
  return target.starts_with("torch.ops.") && !target.starts_with("torch.ops.higher_order.") &&
         target != "torch.ops.aten._assert_scalar.default" &&
         target != "torch.ops.aten.sym_size.int" && target != "torch.ops.aten.sym_numel.default";
}

}  // namespace

LiftedScalars find_lifted_scalars(const Json& nodes, const Json& tensor_values) {
  static const std::set<std::string> kLifted = {
      "_operator.add", "_operator.sub",  "_operator.mul", "_operator.truediv", "_operator.floordiv",
      "_operator.mod", "_operator.pow",  "_operator.neg", "_operator.gt",      "_operator.ge",
      "_operator.lt",  "_operator.le",   "_operator.eq",  "_operator.ne",      "_operator.and_",
      "_operator.or_", "_operator.not_", "torch.sym_not", "torch.sym_ite",     "torch.sym_float"};
  LiftedScalars out;
  if (!nodes.is_array()) return out;
  const std::map<std::string, std::vector<size_t>> readers = name_readers(nodes);
  auto readers_of = [&](const std::string& name) {
    auto it = readers.find(name);
    return it == readers.end() ? std::vector<size_t>{} : it->second;
  };
  struct Chain {
    std::set<size_t> nodes;
    std::set<std::string> reads;  // every name its nodes read
  };
  // Every SymFloat and SymBool the graph computes: numbers a tensor op may take, never sizes.
  std::set<std::string> numbers;
  for (const Json& node : nodes) {
    for (const char* kind : {"as_sym_float", "as_sym_bool"}) {
      const std::string name = scalar_output(node, kind);
      if (!name.empty()) numbers.insert(name);
    }
  }
  // A chain starts at an item() or at a float computed from sizes and constants alone
  // (`x.shape[0] / 2`, `n.item() ** 0.5`).
  const auto is_float_root = [&](const Json& node) {
    if (!kLifted.count(target_of(node)) || scalar_output(node, "as_sym_float").empty())
      return false;
    std::vector<std::string> read;
    if (auto it = node.find("inputs"); it != node.end()) names_in(*it, read);
    return std::none_of(read.begin(), read.end(),
                        [&](const std::string& n) { return numbers.count(n) > 0; });
  };
  std::map<size_t, Chain> chains;  // by root, the chains that may be lifted
  std::set<std::string> derived;   // every name a chain computes, lifted or not
  std::map<std::string, size_t> defined_by;
  for (size_t root = 0; root < nodes.size(); ++root) {
    const bool item = target_of(nodes[root]) == "torch.ops.aten._local_scalar_dense.default";
    if (!item && !is_float_root(nodes[root])) continue;
    Chain chain{{root}, {}};
    std::set<size_t> asserts;
    std::set<std::string> names;
    std::deque<std::string> pending;
    for (const std::string& n : defined_names(nodes[root])) pending.push_back(n);
    bool ok = pending.size() == 1 &&
              (!item || scalar_tensor_dtype(nodes[root], tensor_values).has_value());
    bool reaches_use = false;
    while (!pending.empty()) {
      const std::string name = pending.front();
      pending.pop_front();
      if (!names.insert(name).second) continue;
      derived.insert(name);
      for (size_t reader : readers_of(name)) {
        const std::string target = target_of(nodes[reader]);
        if (target == "torch.ops.higher_order.cond") {
          reaches_use = true;
          ok = ok && input_name(nodes[reader], 0) == name;  // the predicate, nothing else
        } else if (is_tensor_op(target) && numbers.count(name)) {
          // A float or bool as a tensor op's argument; an int there may be a size, which
          // stays a symbol.
          reaches_use = true;
        } else if (target == "torch.ops.aten._assert_scalar.default") {
          asserts.insert(reader);
        } else if (kLifted.count(target)) {
          if (chain.nodes.insert(reader).second) {
            for (const std::string& n : defined_names(nodes[reader])) pending.push_back(n);
          }
        } else {
          ok = false;
        }
      }
    }
    for (size_t n : chain.nodes) {
      for (const std::string& name : defined_names(nodes[n])) defined_by[name] = n;
      if (auto it = nodes[n].find("inputs"); it != nodes[n].end() && !(item && n == root)) {
        std::vector<std::string> read;
        names_in(*it, read);
        chain.reads.insert(read.begin(), read.end());
      }
    }
    const std::string flag = scalar_output(nodes[root], "as_sym_bool");
    for (size_t a : asserts)
      ok = ok && !flag.empty() && holds_for_any_bool(nodes, a, flag, defined_by);
    if (!ok || !reaches_use) continue;
    chain.nodes.insert(asserts.begin(), asserts.end());
    chains[root] = std::move(chain);
  }
  // A chain reading a float or bool of another chain that is not lifted (one reaching a size)
  // stays out, and so, in turn, does any reading it; an int of one is a size expression, which
  // the program computes anyway.
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> lifted;
    for (const auto& [root, chain] : chains) {
      for (size_t n : chain.nodes)
        for (const std::string& name : defined_names(nodes[n])) lifted.insert(name);
    }
    for (auto it = chains.begin(); it != chains.end();) {
      bool reads_unlifted = false;
      for (const std::string& name : it->second.reads)
        reads_unlifted =
            reads_unlifted || (derived.count(name) && numbers.count(name) && !lifted.count(name));
      changed = changed || reads_unlifted;
      it = reads_unlifted ? chains.erase(it) : std::next(it);
    }
  }
  for (const auto& [root, chain] : chains) {
    out.nodes.insert(chain.nodes.begin(), chain.nodes.end());
    for (size_t n : chain.nodes)
      for (const std::string& name : defined_names(nodes[n])) out.defined_by[name] = n;
  }
  return out;
}

ValueChecks find_value_checks(const Json& nodes, const Json& tensor_values) {
  ValueChecks checks;
  if (!nodes.is_array()) return checks;
  std::map<std::string, std::vector<size_t>> readers = name_readers(nodes);
  for (size_t root = 0; root < nodes.size(); ++root) {
    if (target_of(nodes[root]) != "torch.ops.aten._local_scalar_dense.default") continue;
    // The scalar and everything computed from it, until the asserts that test it.
    std::set<size_t> chain = {root}, asserts;
    std::set<std::string> names;
    std::deque<std::string> pending;
    for (const std::string& n : defined_names(nodes[root])) pending.push_back(n);
    bool only_checks = !pending.empty();
    while (only_checks && !pending.empty()) {
      const std::string name = pending.front();
      pending.pop_front();
      if (!names.insert(name).second) continue;
      for (size_t reader : readers[name]) {
        const std::string target = target_of(nodes[reader]);
        if (target == "torch.ops.aten._assert_scalar.default") {
          asserts.insert(reader);
        } else if (is_symbolic_arithmetic(target)) {
          if (chain.insert(reader).second) {
            for (const std::string& n : defined_names(nodes[reader])) pending.push_back(n);
          }
        } else {
          only_checks = false;  // a size or a tensor op's argument: not a check alone
          break;
        }
      }
    }
    if (!only_checks || asserts.empty()) continue;
    if (enforceable(nodes, root, chain, tensor_values)) {
      for (const std::string& n : defined_names(nodes[root])) checks.enforced.insert(n);
      for (size_t n : chain) {
        if (target_of(nodes[n]) != "torch.sym_ite") continue;
        for (const std::string& name : defined_names(nodes[n])) checks.flag_ints.insert(name);
      }
      continue;
    }
    checks.nodes.insert(chain.begin(), chain.end());
    checks.nodes.insert(asserts.begin(), asserts.end());
    checks.symbols.insert(names.begin(), names.end());
    const std::string source = source_of(nodes[*asserts.begin()]);
    checks.sources.push_back(source.empty() ? "(no source location)" : source);
  }
  // The tensor ops computing only what the left-out checks read (the condition tensor).
  std::map<std::string, std::vector<size_t>> tensor_readers;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> read;
    if (auto it = nodes[i].find("inputs"); it != nodes[i].end()) tensors_in(*it, read);
    for (const std::string& name : read) tensor_readers[name].push_back(i);
  }
  for (size_t i = nodes.size(); !checks.nodes.empty() && i-- > 0;) {
    if (checks.nodes.count(i)) continue;
    std::vector<std::string> outputs;
    if (auto it = nodes[i].find("outputs"); it != nodes[i].end()) tensors_in(*it, outputs);
    bool feeds_checks_only = !outputs.empty() && defined_names(nodes[i]).empty();
    for (const std::string& name : outputs) {
      const std::vector<size_t>& readers_of = tensor_readers[name];
      feeds_checks_only = feeds_checks_only && !readers_of.empty();
      for (size_t r : readers_of) feeds_checks_only = feeds_checks_only && checks.nodes.count(r);
    }
    if (feeds_checks_only) checks.nodes.insert(i);
  }
  return checks;
}

}  // namespace pteron::compiler::frontend
