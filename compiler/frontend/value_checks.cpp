#include "compiler/frontend/value_checks.h"

#include <deque>
#include <map>

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

}  // namespace

ValueChecks find_value_checks(const Json& nodes) {
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
