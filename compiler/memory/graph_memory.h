// Plans the memory of a graph's tensors: lifetimes from the execution order, then the offset
// planner. Constants live in the program.
#pragma once

#include <unordered_map>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"

namespace pteron::compiler {

struct GraphMemoryPlan {
  MemoryPlan plan;
  std::unordered_map<ir::ValueId, TensorPlacement> placements;
  std::vector<int64_t> arena_sizes;  // per region, in region order
};

// Plans the values the steps produce (node outputs, delegate outputs) and, with `plan_inputs`,
// the graph inputs (copied in by the runtime, their bytes reused once they are dead, as
// ExecuTorch does); otherwise inputs stay in the caller's buffers (zero copy). Values inside
// delegated regions are the backend's business. Empty `steps` means every node in graph
// order. Throws CompileError with the numbers when the tensors do not fit the regions.
GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryRegion>& regions,
                                  uint64_t alignment, const std::vector<Step>& steps = {},
                                  const std::vector<DelegateToEmit>& delegates = {},
                                  bool plan_inputs = true);

}  // namespace pteron::compiler
