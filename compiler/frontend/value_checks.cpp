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

}  // namespace

ValueChecks find_value_checks(const Json& nodes, const Json& tensor_values) {
  ValueChecks checks;
  if (!nodes.is_array()) return checks;
  // Who reads each symbolic name.
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> read;
    if (auto it = nodes[i].find("inputs"); it != nodes[i].end()) names_in(*it, read);
    for (const std::string& name : read) readers[name].push_back(i);
  }
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
