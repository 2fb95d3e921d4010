// Options every command that executes a program takes: --threads and --kernels. They are
// process-wide runtime settings, so they must be applied before the method is loaded.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "runtime/executor/method.h"

namespace pteron::cli {

struct RuntimeOptions {
  int threads = 0;      // 0: the runtime's default
  std::string kernels;  // "portable" or "optimized,portable"; empty: every library
};

void add_runtime_options(CLI::App* cmd, RuntimeOptions& options);

// Sets the thread count and kernel library preference. Throws UserError for a library no
// kernel in this build belongs to, or a thread count out of range.
void apply_runtime_options(const RuntimeOptions& options);

// Kernel calls of the loaded method per kernel library they resolved to ({"portable": 12}).
std::map<std::string, int> kernel_libraries_used(const Method& method);

}  // namespace pteron::cli
