#include "compiler/memory/graph_memory.h"

#include <algorithm>

#include "compiler/compile_error.h"

namespace pteron::compiler {

GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryRegion>& regions,
                                  uint64_t alignment) {
  std::unordered_map<ir::NodeId, int> step;
  int n = 0;
  for (ir::NodeId id : graph.nodes()) step[id] = n++;
  const int end = n;  // graph outputs stay alive past the last instruction

  std::vector<ir::ValueId> ids;
  std::vector<TensorLifetime> lifetimes;
  for (ir::NodeId id : graph.nodes()) {
    for (ir::ValueId v : graph.node(id).outputs) {
      if (v == ir::kNoValue) continue;
      const ir::Value& value = graph.value(v);
      TensorLifetime t{value.spec.nbytes(), step[id], step[id]};
      for (ir::NodeId user : value.users) t.last = std::max(t.last, step[user]);
      if (std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end()) t.last = end;
      ids.push_back(v);
      lifetimes.push_back(t);
    }
  }
  GraphMemoryPlan result;
  result.plan = plan_memory(lifetimes, regions, alignment);
  if (!result.plan.fits) throw CompileError("memory plan does not fit the target: " + result.plan.why_not);
  const std::string problem = check_memory_plan(lifetimes, result.plan);
  if (!problem.empty()) throw CompileError("internal: memory plan check failed: " + problem);
  for (size_t i = 0; i < ids.size(); ++i) {
    result.placements[ids[i]] = {result.plan.placements[i].mem_id, result.plan.placements[i].offset};
  }
  for (const RegionUsage& r : result.plan.regions) result.arena_sizes.push_back(static_cast<int64_t>(r.used));
  return result;
}

}  // namespace pteron::compiler
