// Targets are data: a TOML file names the CPU, the memory arenas the planner may use, and the
// kernel libraries and backends the target's runtime is built with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/memory/memory_planner.h"

namespace pteron::compiler {

struct Target {
  std::string name;
  std::string description;
  std::string path;  // file it came from
  std::string cpu_arch;
  std::vector<std::string> cpu_features;
  std::vector<MemoryArena> memory;  // mem_id = position + 1
  std::vector<std::string> kernels;
  std::vector<std::string> backends;
  uint64_t tensor_alignment = 16;
  // Plan method inputs into the arena (copied in, reused once dead) or leave them in the
  // caller's buffers (zero copy, more memory).
  bool plan_inputs = true;
  // The runtime's kernels may split one op over several threads (a hosted OS). The memory
  // planner then overlaps an output with its input only where they are the same bytes, not a
  // windowed kernel's output a few rows before its input (kernels/cortex_m/in_place.h): tasks on
  // two threads would race on such an input, and the kernels would have to copy it first.
  bool threaded_kernels = false;
};

// `name_or_path` is a file path, or a name looked up as <targets dir>/<name>.toml. The targets
// dir is $PTERON_TARGETS_DIR, else the repository's targets/. Throws CompileError naming the
// file and key on any problem.
Target load_target(const std::string& name_or_path);

std::string targets_dir();

}  // namespace pteron::compiler
