#include "compiler/compile.h"

#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "compiler/frontend/pt2_loader.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/registry.h"
#include "compiler/report/graph_info.h"

namespace pteron::compiler {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options,
                            const std::vector<const Partitioner*>& partitioners) {
  CompileResult result;
  CompileReport& r = result.report;
  r.target = load_target(options.target);
  r.nodes_in = graph.nodes().size();

  auto t = std::chrono::steady_clock::now();
  r.passes = run_default_passes(graph);

  // Partition, then lower each region; a region whose lowering fails stays on the kernels.
  PartitionResult parts = partition(graph, partitioners);
  MethodToEmit method;
  method.graph = &graph;
  std::unordered_set<ir::NodeId> delegated;
  PartitionResult kept;
  std::vector<std::string> region_backend, region_backend_id;
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
    region_backend.push_back(p.name());
    region_backend_id.push_back(p.backend_id());
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
  check_kernels_available(graph, delegated);
  r.seconds_passes = since(t);

  t = std::chrono::steady_clock::now();
  GraphMemoryPlan memory = plan_graph_memory(graph, r.target.memory, r.target.tensor_alignment,
                                             method.steps, method.delegates, r.target.plan_inputs);
  r.memory = memory.plan;
  r.seconds_plan = since(t);

  t = std::chrono::steady_clock::now();
  method.placements = std::move(memory.placements);
  method.arena_sizes = memory.arena_sizes;
  std::vector<NamedDataToEmit> named;
  if (!options.strip_debug_info) {
    GraphInfoInput info;
    info.graph = &graph;
    info.had_partitioners = !partitioners.empty();
    for (const Partitioner* p : partitioners) info.backends.push_back(p->name());
    for (const std::string& name : options.backends) {
      if (is_kernel_library(name)) info.kernel_libraries.push_back(name);
    }
    if (info.kernel_libraries.empty()) info.kernel_libraries = r.target.kernels;
    info.backends.insert(info.backends.end(), info.kernel_libraries.begin(), info.kernel_libraries.end());
    info.regions = &kept;
    info.region_backend = region_backend;
    info.region_backend_id = region_backend_id;
    info.refusals = &parts.refusals;
    info.steps = &method.steps;
    const std::string text = graph_info_json(info);
    named.push_back({kGraphInfoKey, std::vector<uint8_t>(text.begin(), text.end())});
    r.graph_info_bytes = text.size();
  }
  if (options.output_path.empty()) {
    result.program = emit_program({method}, &r.emit, named);
  } else {
    try {
      FileSink sink(options.output_path.c_str());
      emit_program({method}, sink, &r.emit, named);
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
