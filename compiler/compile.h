// The compiler's front door: .pt2 (or a graph) in, .pte bytes and a report out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"
#include "compiler/passes/passes.h"
#include "compiler/partition/partitioner.h"
#include "compiler/quantize/llm_quantize.h"
#include "compiler/quantize/quantize.h"
#include "compiler/target/target.h"

namespace pteron::compiler {

struct CompileOptions {
  std::string target = "host";
  // Ordered: partitioners claim regions first to last; kernel libraries ("portable") take the
  // rest. Empty means the target file's backends, then its kernels.
  std::vector<std::string> backends;
  // When set, the program is streamed to this file (weights go from the archive straight to
  // the file) and CompileResult::program stays empty.
  std::string output_path;
  // When set, the float graph is quantized to int8 (Q/DQ form) after the default passes.
  const QuantizeOptions* quantize = nullptr;
  // When set, linear and embedding weights get LLM int8/int4 quantization (no calibration;
  // compiler/quantize/llm_quantize.h) after the default passes. Needs the optimized library.
  const LlmQuantizeOptions* llm_quantize = nullptr;
  // Leave out the graph info (named data "pteron.graph_info": nodes, regions, reasons, FLOPs,
  // instruction -> node map) that `pteron inspect --delegation` and profilers read.
  bool strip_debug_info = false;
  // When set, the program also carries a CPU fallback plan "<method>:cpu": the same graph
  // compiled with these backends (e.g. {"xnnpack", "portable"}). The runtime runs it when the
  // main plan needs a backend the device lacks (runtime/executor/plan_choice.h).
  std::vector<std::string> fallback;
};

struct RegionSummary {
  std::string backend;
  size_t nodes = 0;
  size_t inputs = 0;
  size_t outputs = 0;
  std::string report_json;  // LoweredRegion::report_json ("" when the backend gives none)
};

struct CompileReport {
  Target target;
  size_t nodes_in = 0;       // nodes read from the .pt2
  size_t nodes_out = 0;      // kernel calls emitted
  PassReport passes;
  std::optional<QuantizeReport> quantize;
  std::vector<RegionSummary> regions;  // delegated regions, in execution order
  std::vector<std::string> refusals;   // "node (op @ source): backend: reason" for kept nodes
  std::vector<RegionSummary> fallback_regions;  // the CPU fallback plan's, when there is one
  uint64_t graph_info_bytes = 0;       // 0 when stripped
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
// The same with partitioner objects given directly (tests, and backends under development).
CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options,
                            const std::vector<const Partitioner*>& partitioners);
CompileResult compile_pt2(const std::string& path, const CompileOptions& options);

}  // namespace pteron::compiler
