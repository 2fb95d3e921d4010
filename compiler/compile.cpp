#include "compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "compiler/frontend/pt2_loader.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/registry.h"
#include "compiler/passes/fuse_attention.h"

namespace pteron::compiler {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The kernel libraries the program may use: those named in the backends list, else the
// target's.
std::vector<std::string> selected_kernel_libraries(const CompileOptions& options, const Target& target) {
  std::vector<std::string> libraries = kernel_libraries_in(options.backends);
  return libraries.empty() ? target.kernels : libraries;
}

// Passes that rewrite the graph into a kernel library's own ops. They run only when that
// library is selected, so a portable-only program stays runnable on ExecuTorch.
void run_kernel_library_passes(ir::Graph& graph, const std::vector<std::string>& libraries,
                               PassReport& report) {
  auto run = [&](const char* pass, int (*fn)(ir::Graph&)) {
    const auto start = std::chrono::steady_clock::now();
    const int n = fn(graph);
    char line[160];
    std::snprintf(line, sizeof(line), "%s: %d node(s), %.1f ms", pass, n, since(start) * 1e3);
    report.lines.push_back(line);
  };
  if (std::find(libraries.begin(), libraries.end(), "optimized") != libraries.end()) {
    run("fuse_attention", fuse_attention);
    run("remove_dead_code", remove_dead_code);
  }
}

}  // namespace

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options,
                            const std::vector<const Partitioner*>& partitioners) {
  CompileResult result;
  CompileReport& r = result.report;
  r.target = load_target(options.target);
  r.nodes_in = graph.nodes().size();

  const std::vector<std::string> libraries = selected_kernel_libraries(options, r.target);
  auto t = std::chrono::steady_clock::now();
  r.passes = run_default_passes(graph);
  run_kernel_library_passes(graph, libraries, r.passes);

  // Partition, then lower each region; a region whose lowering fails stays on the kernels.
  PartitionResult parts = partition(graph, partitioners);
  MethodToEmit method;
  method.graph = &graph;
  std::unordered_set<ir::NodeId> delegated;
  PartitionResult kept;
  for (const Region& region : parts.regions) {
    const Partitioner& p = *partitioners[region.partitioner];
    LoweredRegion lowered = p.lower(graph, region);
    if (!lowered.ok) {
      for (ir::NodeId n : region.nodes) parts.refusals[n].push_back(p.name() + ": " + lowered.reason);
      continue;
    }
    const size_t index = kept.regions.size();
    for (ir::NodeId n : region.nodes) {
      kept.region_of[n] = index;
      delegated.insert(n);
    }
    kept.regions.push_back(region);
    method.delegates.push_back(DelegateToEmit{p.backend_id(), std::move(lowered.payload),
                                              std::move(lowered.compile_specs), region.inputs,
                                              region.outputs});
    r.regions.push_back({p.name(), region.nodes.size(), region.inputs.size(), region.outputs.size()});
  }
  for (ir::NodeId n : contracted_order(graph, kept)) {
    auto it = kept.region_of.find(n);
    method.steps.push_back(it == kept.region_of.end() ? Step{n, -1} : Step{ir::kNoNode, static_cast<int>(it->second)});
  }
  for (ir::NodeId n : graph.nodes()) {
    if (delegated.count(n)) continue;
    auto it = parts.refusals.find(n);
    if (it == parts.refusals.end()) continue;
    for (const std::string& why : it->second) r.refusals.push_back(graph.node(n).describe() + ": " + why);
  }
  check_kernels_available(graph, delegated, libraries);
  r.seconds_passes = since(t);

  t = std::chrono::steady_clock::now();
  GraphMemoryPlan memory = plan_graph_memory(graph, r.target.memory, r.target.tensor_alignment,
                                             method.steps, method.delegates, r.target.plan_inputs);
  r.memory = memory.plan;
  r.seconds_plan = since(t);

  t = std::chrono::steady_clock::now();
  method.placements = std::move(memory.placements);
  method.arena_sizes = memory.arena_sizes;
  if (options.output_path.empty()) {
    result.program = emit_program({method}, &r.emit);
  } else {
    try {
      FileSink sink(options.output_path.c_str());
      emit_program({method}, sink, &r.emit);
      sink.close();
    } catch (...) {
      std::remove(options.output_path.c_str());  // never leave half a program behind
      throw;
    }
  }
  r.nodes_out = r.emit.instructions;
  r.seconds_emit = since(t);
  return result;
}

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options) {
  std::vector<std::string> backends = options.backends;
  if (backends.empty()) {
    const Target target = load_target(options.target);
    backends = target.backends;
    backends.insert(backends.end(), target.kernels.begin(), target.kernels.end());
  }
  const std::vector<std::unique_ptr<Partitioner>> owned = make_partitioners(backends);
  std::vector<const Partitioner*> partitioners;
  for (const auto& p : owned) partitioners.push_back(p.get());
  return compile_graph(graph, options, partitioners);
}

CompileResult compile_pt2(const std::string& path, const CompileOptions& options) {
  const auto t = std::chrono::steady_clock::now();
  ir::Graph graph = frontend::load_pt2(path);
  const double load = since(t);
  CompileResult result = compile_graph(graph, options);
  result.report.seconds_load = load;
  return result;
}

}  // namespace pteron::compiler
