#include "compiler/target/target.h"

#include <toml++/toml.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/compile_error.h"
#include "runtime/host/self_location.h"

namespace pteron::compiler {
namespace {

std::vector<std::string> string_list(const toml::table& t, const char* key,
                                     const std::string& where) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* arr = n->as_array();
  if (arr == nullptr) throw CompileError(where + ": '" + key + "' must be a list of strings");
  for (const toml::node& item : *arr) {
    if (!item.is_string()) throw CompileError(where + ": '" + key + "' must be a list of strings");
    out.push_back(item.as_string()->get());
  }
  return out;
}

}  // namespace

std::string targets_dir() {
  if (const char* env = std::getenv("PTERON_TARGETS_DIR")) return env;
  // Installed: <prefix>/share/pteron/targets (the wheel: site-packages/pteron/share/...; the
  // Python module sits beside the package); the build tree links build/share/pteron/targets.
  std::string looked;
  std::string dir =
      host::find_near_self({"share/pteron/targets", "pteron/share/pteron/targets"}, &looked);
  if (dir.empty())
    throw CompileError("the targets folder was not found (looked for " + looked +
                       "; set PTERON_TARGETS_DIR)");
  return dir;
}

Target load_target(const std::string& name_or_path) {
  std::filesystem::path path(name_or_path);
  if (!std::filesystem::exists(path))
    path = std::filesystem::path(targets_dir()) / (name_or_path + ".toml");
  if (!std::filesystem::exists(path)) {
    throw CompileError("unknown target '" + name_or_path + "' (no file, and no " + path.string() +
                       ")");
  }
  const std::string where = path.string();
  toml::table root;
  try {
    root = toml::parse_file(where);
  } catch (const toml::parse_error& e) {
    throw CompileError(where + ":" + std::to_string(e.source().begin.line) + ": " +
                       std::string(e.description()));
  }
  Target t;
  t.path = where;
  t.name = root["name"].value_or(path.stem().string());
  t.description = root["description"].value_or(std::string());
  t.cpu_arch = root["cpu"]["arch"].value_or(std::string("native"));
  if (const toml::table* cpu = root["cpu"].as_table())
    t.cpu_features = string_list(*cpu, "features", where);
  const toml::array* memory = root["memory"].as_array();
  if (memory == nullptr || memory->empty())
    throw CompileError(where + ": needs at least one [[memory]] region");
  uint32_t mem_id = 1;
  for (const toml::node& m : *memory) {
    const toml::table* region = m.as_table();
    if (region == nullptr) throw CompileError(where + ": [[memory]] entries must be tables");
    const auto size = (*region)["size"].value<int64_t>();
    const auto name = (*region)["name"].value<std::string>();
    if (!name || !size || *size < 0) {
      throw CompileError(where + ": memory region " + std::to_string(mem_id) +
                         " needs a name and a size >= 0");
    }
    t.memory.push_back({*name, mem_id++, static_cast<uint64_t>(*size)});
  }
  if (const toml::table* rt = root["runtime"].as_table()) {
    t.kernels = string_list(*rt, "kernels", where);
    t.backends = string_list(*rt, "backends", where);
    const int64_t alignment = (*rt)["tensor_alignment"].value_or(int64_t{16});
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
      throw CompileError(where + ": runtime.tensor_alignment must be a power of two");
    }
    t.tensor_alignment = static_cast<uint64_t>(alignment);
    t.plan_inputs = (*rt)["plan_inputs"].value_or(true);
    t.threaded_kernels = (*rt)["threaded_kernels"].value_or(false);
  }
  return t;
}

}  // namespace pteron::compiler
