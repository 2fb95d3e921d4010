#include "compiler/memory/graph_memory.h"

#include <algorithm>

#include "compiler/compile_error.h"

namespace pteron::compiler {

GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryRegion>& regions,
                                  uint64_t alignment, const std::vector<Step>& given_steps,
                                  const std::vector<DelegateToEmit>& delegates, bool plan_inputs) {
  std::vector<Step> steps = given_steps;
  if (steps.empty()) {
    for (ir::NodeId id : graph.nodes()) steps.push_back(Step{id, -1});
  }
  auto produced = [&](const Step& s) -> std::vector<ir::ValueId> {
    return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].outputs : graph.node(s.node).outputs;
  };
  auto used = [&](const Step& s) -> std::vector<ir::ValueId> {
    return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].inputs : graph.node(s.node).inputs();
  };
  const int end = static_cast<int>(steps.size());  // graph outputs stay alive past the last step
  std::unordered_map<ir::ValueId, size_t> index;   // value -> position in ids/lifetimes
  std::vector<ir::ValueId> ids;
  std::vector<TensorLifetime> lifetimes;
  if (plan_inputs) {
    for (ir::ValueId v : graph.inputs()) {
      index[v] = ids.size();
      ids.push_back(v);
      lifetimes.push_back(TensorLifetime{graph.value(v).spec.nbytes(), 0, 0});
    }
  }
  for (int i = 0; i < end; ++i) {
    for (ir::ValueId v : used(steps[static_cast<size_t>(i)])) {
      if (auto it = index.find(v); it != index.end()) lifetimes[it->second].last = i;
    }
    for (ir::ValueId v : produced(steps[static_cast<size_t>(i)])) {
      if (v == ir::kNoValue) continue;
      index[v] = ids.size();
      ids.push_back(v);
      lifetimes.push_back(TensorLifetime{graph.value(v).spec.nbytes(), i, i});
    }
  }
  for (ir::ValueId v : graph.outputs()) {
    if (auto it = index.find(v); it != index.end()) lifetimes[it->second].last = end;
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
