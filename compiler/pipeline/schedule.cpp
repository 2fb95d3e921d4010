// Stages 3 and 4: the kernel libraries' passes on what no delegate took, then the method's
// execution order.
#include <chrono>
#include <cstdio>

#include "compiler/pipeline/pipeline.h"

namespace pteron::compiler {

PassReport run_library_passes(ir::Graph& graph, const std::vector<const KernelLibrary*>& libraries,
                              const std::unordered_set<ir::NodeId>& delegated,
                              const PartitionContext& context) {
  PassReport report;
  for (const KernelLibrary* lib : libraries) {
    for (const auto& [pass_name, pass] : lib->passes) {
      const auto start = std::chrono::steady_clock::now();
      const int changed = pass(graph, delegated, context);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      char line[160];
      std::snprintf(line, sizeof line, "%s/%s: %d node(s) (%.1f ms)", lib->name.c_str(),
                    pass_name.c_str(), changed, ms);
      report.lines.push_back(line);
    }
  }
  return report;
}

MethodSchedule schedule_method(ir::Graph& graph, const LoweredGraph& lowered,
                               const std::vector<const KernelLibrary*>& libraries) {
  MethodSchedule out;
  for (ir::NodeId n : contracted_order(graph, lowered.kept)) {
    auto it = lowered.kept.region_of.find(n);
    out.steps.push_back(it == lowered.kept.region_of.end()
                            ? Step{n, -1}
                            : Step{ir::kNoNode, static_cast<int>(it->second)});
  }
  for (ir::NodeId n : graph.nodes()) {
    if (lowered.delegated.count(n)) continue;
    auto it = lowered.refusals.find(n);
    if (it == lowered.refusals.end()) continue;
    for (const std::string& why : it->second)
      out.refusals.push_back(graph.node(n).describe() + ": " + why);
  }
  // State: every buffer update is computed in the buffer's memory, or copied into it last.
  out.state_copies = insert_state_write_backs(graph, out.steps, lowered.delegates);
  std::vector<std::string> runtime_libraries;
  for (const KernelLibrary* lib : libraries) runtime_libraries.push_back(lib->runtime_library);
  check_kernels_available(graph, lowered.delegated, runtime_libraries);
  return out;
}

}  // namespace pteron::compiler
