// The compile as a pipeline of named stages, each a function from explicit inputs to a result.
// compile_graph (compiler/compile.cpp) runs them in this order for every method:
//
//   1. prepare_graph       the default passes (default_passes(), in order), then the options'
//                          rewrites: --last-token-logits, int8 quantization, LLM quantization
//   2. partition_and_lower partitioners claim regions (compiler/partition); each region is
//                          lowered to its backend's payload, its boundary given the dim orders
//                          the payload wants
//   3. run_library_passes  each selected kernel library's passes (KernelLibrary::passes,
//                          registered from the library's own folder), library by library in the
//                          order selected, on the nodes no delegate took
//   4. schedule_method     the execution order, state write-backs, the kernel check
//   5. plan_method_memory  memory views, arenas and offsets, allocation-only nodes dropped
//   6. emission            graph info and the .pte (compiler/emit), in compile.cpp
//
// Each stage edits the graph it is given (the one object the pipeline transforms) and returns
// what it decided; a later stage takes those results as arguments.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/partitioner.h"
#include "compiler/partition/registry.h"
#include "compiler/partition/schedule.h"
#include "compiler/passes/passes.h"
#include "compiler/quantize/llm_quantize.h"
#include "compiler/quantize/quantize.h"
#include "compiler/target/target.h"

namespace pteron::compiler {

// A graph pass as the pipeline lists it: its name in the compile report, and the pass.
struct NamedPass {
  const char* name;
  int (*run)(ir::Graph& graph);
};

// The default passes, in the order they run (views and no-ops twice: removing a no-op clone
// leaves view chains that compose). The same list for every target and backend.
const std::vector<NamedPass>& default_passes();

// run_default_passes (declared in passes.h, defined with the list in prepare.cpp) runs
// default_passes() and verifies the graph; a report line per pass.

// The kernel libraries named in `backends`, in order; the target's when none is named.
std::vector<const KernelLibrary*> selected_libraries(const std::vector<std::string>& backends,
                                                     const Target& target);

// 1. What the graph goes through before partitioning, besides the default passes.
struct PrepareOptions {
  bool last_token_logits = false;
  const QuantizeOptions* quantize = nullptr;
  const LlmQuantizeOptions* llm_quantize = nullptr;
};
struct PreparedGraph {
  PassReport passes;
  std::optional<QuantizeReport> quantize;
};
// Throws CompileError when an option cannot apply (no logits output; LLM quantization without
// the optimized library among `libraries`).
PreparedGraph prepare_graph(ir::Graph& graph, const PrepareOptions& options,
                            const std::vector<const KernelLibrary*>& libraries);

// 2. The regions the backends took, lowered.
struct RegionSummary {
  std::string backend;
  size_t nodes = 0;
  size_t inputs = 0;
  size_t outputs = 0;
  std::string report_json;  // LoweredRegion::report_json ("" when the backend gives none)
};
struct LoweredGraph {
  PartitionResult kept;  // the regions lowered (a refused lowering's region is not among them)
  std::unordered_set<ir::NodeId> delegated;  // their nodes
  std::vector<LoweredDelegate> delegates;    // one per kept region, same order
  std::vector<std::string> region_backend;   // partitioner label per kept region
  std::vector<std::string> region_backend_id;
  std::vector<RegionSummary> summaries;  // per kept region, for the report
  // Per node left on the kernels: each partitioner's reason, and the lowerings' refusals.
  std::unordered_map<ir::NodeId, std::vector<std::string>> refusals;
};
// A Refusal thrown while lowering gives its region back to the kernels with the reason; any
// other exception fails the compile naming the region's first node.
LoweredGraph partition_and_lower(ir::Graph& graph,
                                 const std::vector<const Partitioner*>& partitioners,
                                 const PartitionContext& context);

// 3. The selected kernel libraries' passes; a report line per pass ("optimized/fuse_rms_norm").
PassReport run_library_passes(ir::Graph& graph, const std::vector<const KernelLibrary*>& libraries,
                              const std::unordered_set<ir::NodeId>& delegated,
                              const PartitionContext& context);

// 4. The execution order of the method.
struct MethodSchedule {
  std::vector<Step> steps;
  std::vector<std::string> refusals;  // "node (op @ source): backend: reason", kept nodes only
  int state_copies = 0;               // buffer updates copied into their buffer at the end
};
// Throws CompileError listing every node without a kernel in `libraries`.
MethodSchedule schedule_method(ir::Graph& graph, const LoweredGraph& lowered,
                               const std::vector<const KernelLibrary*>& libraries);

// 5. Where every planned tensor lives.
struct MethodMemory {
  std::vector<Step> steps;  // the schedule less static views and allocation-only nodes
  std::unordered_map<ir::ValueId, MemoryView> views;
  int dynamic_views = 0;  // views that keep an et_view instruction
  size_t allocation_only = 0;
  GraphMemoryPlan plan;
};
MethodMemory plan_method_memory(ir::Graph& graph, std::vector<Step> steps,
                                const std::vector<LoweredDelegate>& delegates, const Target& target,
                                const std::vector<const KernelLibrary*>& libraries,
                                const StateLayout* state_layout);

}  // namespace pteron::compiler
