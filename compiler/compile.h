// The compiler's front door: .pt2 (or a graph) in, .pte bytes and a report out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/cost/cost_model.h"
#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"
#include "compiler/partition/partitioner.h"
#include "compiler/passes/passes.h"
#include "compiler/pipeline/pipeline.h"  // RegionSummary
#include "compiler/quantize/llm_quantize.h"
#include "compiler/quantize/quantize.h"
#include "compiler/target/target.h"

namespace pteron::compiler {

struct StateLayout;  // compiler/memory/graph_memory.h

struct CompileOptions {
  std::string target = "host";
  // Ordered: partitioners claim regions first to last; kernel libraries ("portable") take the
  // rest. Empty means the target file's backends, then its kernels. A backend's options follow
  // its name ("vulkan:fp16=on"; compiler/partition/registry.h).
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
  // Constant methods written after the program's methods (ExecuTorch's constant_methods),
  // e.g. LLM metadata {"get_max_seq_len", {128}}; compiler/emit/constant_methods.h.
  std::vector<ConstantMethod> constant_methods;
  // Also write the LLM metadata a stateful decoder implies (derive_llm_metadata: cache length,
  // use_kv_cache, vocabulary size); a constant method given above replaces one of the same name.
  bool llm_metadata = true;
  // Output 0 (a decoder's logits [1, T, vocab]) for the last token only, [1, 1, vocab]
  // (compiler/passes/last_token_logits.h): prefill runs the vocabulary projection once.
  bool last_token_logits = false;
  // This machine's calibration for the cost model (PartitionContext::calibration); the caller
  // gives it only when the program will run where it was measured (the host target).
  const cost::Calibration* calibration = nullptr;
  // Why the caller found a calibration and left it unused (cost::HostCalibration::note): one of
  // the report's notes.
  std::string calibration_note;
  // Internal (compile_pt2_methods): the program-wide state layout every method plans with.
  const StateLayout* state_layout = nullptr;
};

struct CompileReport {
  Target target;
  size_t nodes_in = 0;   // nodes read from the .pt2
  size_t nodes_out = 0;  // kernel calls emitted
  PassReport passes;
  std::optional<QuantizeReport> quantize;
  std::vector<RegionSummary> regions;  // delegated regions, in execution order
  std::vector<std::string> refusals;   // "node (op @ source): backend: reason" for kept nodes
  std::vector<RegionSummary> fallback_regions;  // the CPU fallback plan's, when there is one
  uint64_t graph_info_bytes = 0;                // 0 when stripped
  std::vector<std::string> constant_methods;    // "get_max_seq_len=16", what was written
  std::vector<std::string> backends;            // delegates then kernel libraries, in order
  bool default_backends = false;                // `backends` is the target's default
  std::vector<std::string> backends_left_out;   // default backends this build does not have
  // The cost model's calibration the partitioners weighed regions with ("" without one): the
  // machine it describes and when it was measured.
  std::string calibration;
  // Things the user may want to change, one line each (an old backend spelling's new one).
  std::vector<std::string> notes;
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

// One program with several methods, each (name, .pt2 path) compiled with `options` (no
// fallback plans; no graph info). State is shared by buffer name, as ExecuTorch's
// share_mutable_buffers: a buffer any method mutates is state in every method that reads it,
// at one offset of one state arena, so the methods see each other's writes when the runtime
// gives them one arena (HostMethod does). The report is the first method's, with `methods`.
CompileResult compile_pt2_methods(const std::vector<std::pair<std::string, std::string>>& methods,
                                  const CompileOptions& options);

}  // namespace pteron::compiler
