#include "compiler/partition/registry.h"

#include <map>

#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

std::map<std::string, PartitionerFactory>& factories() {
  static std::map<std::string, PartitionerFactory> f;
  return f;
}

}  // namespace

bool is_kernel_library(const std::string& name) { return name == "portable" || name == "optimized"; }

std::vector<std::string> kernel_libraries_in(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (is_kernel_library(n)) out.push_back(n);
  }
  return out;
}

bool register_partitioner(const std::string& name, PartitionerFactory factory) {
  return factories().emplace(name, std::move(factory)).second;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names = {"portable", "optimized"};
  for (const auto& [name, _] : factories()) names.push_back(name);
  return names;
}

std::vector<std::unique_ptr<Partitioner>> make_partitioners(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Partitioner>> out;
  for (const std::string& name : names) {
    if (is_kernel_library(name)) continue;
    auto it = factories().find(name);
    if (it == factories().end()) {
      std::string known;
      for (const std::string& n : available_backends()) known += (known.empty() ? "" : ", ") + n;
      throw CompileError("unknown backend '" + name + "' (available: " + known + ")");
    }
    out.push_back(it->second());
  }
  return out;
}

}  // namespace pteron::compiler
