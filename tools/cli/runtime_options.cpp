#include "tools/cli/runtime_options.h"

#include <set>
#include <vector>

#include "runtime/kernel/kernel.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/commands.h"

namespace pteron::cli {

void add_runtime_options(CLI::App* cmd, RuntimeOptions& options) {
  cmd->add_option("--threads", options.threads,
                  "threads for optimized kernels and delegates (0: runtime default)")
      ->capture_default_str();
  cmd->add_option(
      "--kernels", options.kernels,
      "kernel libraries to use, most preferred first (e.g. portable, optimized,portable)");
}

void apply_runtime_options(const RuntimeOptions& options) {
  if (options.threads < 0 || options.threads > kMaxThreads) {
    throw UserError("--threads " + std::to_string(options.threads) + " is out of range (0 to " +
                    std::to_string(kMaxThreads) + ")");
  }
  set_num_threads(options.threads);
  if (options.kernels.empty()) return;
  std::set<std::string> known;
  for (const KernelEntry& e : registered_kernels()) known.insert(e.library);
  // The registry keeps pointers to these strings for the rest of the process.
  static std::vector<std::string> names;
  static std::vector<const char*> pointers;
  names.clear();
  pointers.clear();
  std::string rest = options.kernels;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string name = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (name.empty()) continue;
    if (!known.count(name)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw UserError("--kernels: no kernel library '" + name +
                      "' in this build (available: " + list + ")");
    }
    names.push_back(name);
  }
  if (names.empty()) throw UserError("--kernels: give at least one kernel library");
  for (const std::string& n : names) pointers.push_back(n.c_str());
  if (!set_kernel_libraries(Span<const char* const>(pointers.data(), pointers.size()))) {
    throw UserError("--kernels: at most " + std::to_string(kMaxKernelLibraries) + " libraries");
  }
}

}  // namespace pteron::cli

namespace pteron::cli {

std::map<std::string, int> kernel_libraries_used(const Method& method) {
  std::map<std::string, int> used;
  for (size_t i = 0; i < method.num_instructions(); ++i) {
    if (method.instruction_is_delegate(i)) continue;
    const KernelEntry* entry = find_kernel(method.instruction_name(i), "");
    ++used[entry ? entry->library : "?"];
  }
  return used;
}

}  // namespace pteron::cli
