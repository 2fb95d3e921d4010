// The compiler's front door: .pt2 (or a graph) in, .pte bytes and a report out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"
#include "compiler/passes/passes.h"
#include "compiler/target/target.h"

namespace pteron::compiler {

struct CompileOptions {
  std::string target = "host";
};

struct CompileReport {
  Target target;
  size_t nodes_in = 0;       // nodes read from the .pt2
  size_t nodes_out = 0;      // kernel calls emitted
  PassReport passes;
  MemoryPlan memory;
  EmitStats emit;
  double seconds_load = 0, seconds_passes = 0, seconds_plan = 0, seconds_emit = 0;
};

struct CompileResult {
  std::vector<uint8_t> program;
  CompileReport report;
};

// Throws CompileError (one line naming the node, op and source location) on failure.
CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options);
CompileResult compile_pt2(const std::string& path, const CompileOptions& options);

}  // namespace pteron::compiler
