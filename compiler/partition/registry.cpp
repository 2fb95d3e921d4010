#include "compiler/partition/registry.h"

#include <algorithm>
#include <map>

#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

struct Registered {
  PartitionerFactory make;
  std::vector<BackendOption> options;
};

std::map<std::string, Registered>& factories() {
  static std::map<std::string, Registered> f;
  return f;
}

std::map<std::string, std::string>& aliases() {
  static std::map<std::string, std::string> a;
  return a;
}

// The kernel libraries register themselves from their own folders (kernels/<name>/aot);
// portable needs no passes, so it is the one built in.
std::map<std::string, KernelLibrary>& libraries() {
  static std::map<std::string, KernelLibrary> l = {
      {"portable", KernelLibrary{"portable", "portable", {}}}};
  return l;
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

LibraryPass context_free(int (*pass)(ir::Graph&, const std::unordered_set<ir::NodeId>&)) {
  return [pass](ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                const PartitionContext&) { return pass(graph, delegated); };
}

bool is_kernel_library(const std::string& name) { return libraries().count(name) != 0; }

bool register_kernel_library(KernelLibrary library) {
  const std::string name = library.name;
  return libraries().emplace(name, std::move(library)).second;
}

const KernelLibrary* find_kernel_library(const std::string& name) {
  auto it = libraries().find(name);
  return it == libraries().end() ? nullptr : &it->second;
}

bool register_partitioner(const std::string& name, PartitionerFactory factory,
                          std::vector<BackendOption> options) {
  return factories().emplace(name, Registered{std::move(factory), std::move(options)}).second;
}

bool register_backend_alias(const std::string& alias, const std::string& spelling) {
  return aliases().emplace(alias, spelling).second;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& [name, _] : factories()) names.push_back(name);
  for (const auto& [name, _] : libraries()) names.push_back(name);
  return names;
}

std::vector<std::string> backend_option_help() {
  std::vector<std::string> lines;
  for (const auto& [name, registered] : factories()) {
    for (const BackendOption& o : registered.options)
      lines.push_back(name + ":" + o.key + "=" + joined(o.values, "|") + ": " + o.help);
  }
  return lines;
}

BackendSpec parse_backend_spec(const std::string& text) {
  BackendSpec spec;
  std::string written = text;
  if (auto alias = aliases().find(text); alias != aliases().end()) {
    written = alias->second;
    spec.note = "backend '" + text + "' is now written '" + written + "'";
  }
  size_t colon = written.find(':');
  spec.name = written.substr(0, colon);
  const bool library = is_kernel_library(spec.name);
  auto it = factories().find(spec.name);
  if (!library && it == factories().end()) {
    throw CompileError("unknown backend '" + spec.name +
                       "' (available: " + joined(available_backends(), ", ") + ")");
  }
  while (colon != std::string::npos) {
    const size_t next = written.find(':', colon + 1);
    const std::string item = written.substr(colon + 1, next - colon - 1);
    colon = next;
    if (library) {
      throw CompileError("kernel library '" + spec.name + "' takes no options (got '" + item +
                         "')");
    }
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const std::vector<BackendOption>& known = it->second.options;
    const BackendOption* option = nullptr;
    for (const BackendOption& o : known) option = o.key == key ? &o : option;
    if (option == nullptr) {
      std::vector<std::string> keys;
      for (const BackendOption& o : known) keys.push_back(o.key);
      throw CompileError(
          "backend '" + spec.name + "' has no option '" + key + "' (" +
          (keys.empty() ? std::string("it takes none") : "options: " + joined(keys, ", ")) + ")");
    }
    if (std::find(option->values.begin(), option->values.end(), value) == option->values.end()) {
      throw CompileError("backend option " + spec.name + ":" + key + " takes " +
                         joined(option->values, ", ") + " (got '" + value + "')");
    }
    if (!spec.options.emplace(key, value).second)
      throw CompileError("backend option " + spec.name + ":" + key + " is given twice");
  }
  return spec;
}

std::vector<std::unique_ptr<Partitioner>> make_partitioners(const std::vector<std::string>& names,
                                                            std::vector<std::string>* notes) {
  std::vector<std::unique_ptr<Partitioner>> out;
  for (const std::string& text : names) {
    const BackendSpec spec = parse_backend_spec(text);
    if (!spec.note.empty() && notes != nullptr) notes->push_back(spec.note);
    if (is_kernel_library(spec.name)) continue;
    out.push_back(factories().at(spec.name).make(spec.options));
  }
  return out;
}

}  // namespace pteron::compiler
