#include "compiler/memory/graph_memory.h"

#include <algorithm>

#include "compiler/compile_error.h"

namespace pteron::compiler {

GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryRegion>& regions,
                                  uint64_t alignment, const std::vector<Step>& given_steps,
                                  const std::vector<DelegateToEmit>& delegates, bool plan_inputs,
                                  const std::unordered_set<std::string>& in_place_ops) {
  std::vector<Step> steps = given_steps;
  if (steps.empty()) {
    for (ir::NodeId id : graph.nodes()) steps.push_back(Step{id, -1});
  }
  auto produced = [&](const Step& s) -> std::vector<ir::ValueId> {
    return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].outputs
                           : graph.node(s.node).outputs;
  };
  auto used = [&](const Step& s) -> std::vector<ir::ValueId> {
    return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].inputs
                           : graph.node(s.node).inputs();
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
  // In place: an output takes its input's entry (one placement, the union of both lifetimes)
  // when this node is the input's last reader (its lifetime ends here: no later step, delegate
  // or graph output reads it) and the sizes match. Chains (requantize -> clamp) share one entry.
  std::vector<size_t> entry(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) entry[k] = k;
  for (int i = 0; i < end && !in_place_ops.empty(); ++i) {
    const Step& s = steps[static_cast<size_t>(i)];
    if (s.delegate >= 0) continue;
    const ir::Node& n = graph.node(s.node);
    if (!in_place_ops.count(n.op.str()) || n.outputs.size() != 1) continue;
    const auto out = index.find(n.outputs[0]);
    if (out == index.end()) continue;
    for (ir::ValueId in : n.inputs()) {
      const auto it = index.find(in);
      if (it == index.end() || lifetimes[it->second].last != i ||
          lifetimes[it->second].bytes != lifetimes[out->second].bytes) {
        continue;
      }
      const size_t root = entry[it->second];
      entry[out->second] = root;
      lifetimes[root].last = std::max(lifetimes[root].last, lifetimes[out->second].last);
      result.in_place[n.outputs[0]] = in;
      break;
    }
  }
  std::vector<TensorLifetime> planned;
  std::vector<size_t> planned_of(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    if (entry[k] != k) continue;
    planned_of[k] = planned.size();
    planned.push_back(lifetimes[k]);
  }
  result.plan = plan_memory(planned, regions, alignment);
  result.plan.in_place_outputs = result.in_place.size();
  if (!result.plan.fits)
    throw CompileError("memory plan does not fit the target: " + result.plan.why_not);
  const std::string problem = check_memory_plan(planned, result.plan);
  if (!problem.empty()) throw CompileError("internal: memory plan check failed: " + problem);
  for (size_t i = 0; i < ids.size(); ++i) {
    const Placement& p = result.plan.placements[planned_of[entry[i]]];
    result.placements[ids[i]] = {p.mem_id, p.offset};
  }
  for (const RegionUsage& r : result.plan.regions)
    result.arena_sizes.push_back(static_cast<int64_t>(r.used));
  return result;
}

}  // namespace pteron::compiler
