// Plans the memory of a graph's tensors: lifetimes from the execution order, then the offset
// planner. Constants live in the program.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"

namespace pteron::compiler {

struct GraphMemoryPlan {
  MemoryPlan plan;
  std::unordered_map<ir::ValueId, TensorPlacement> placements;
  std::vector<int64_t> arena_sizes;                       // per region, in region order
  std::unordered_map<ir::ValueId, ir::ValueId> in_place;  // output -> the input it overwrites
};

// Plans the values the steps produce (node outputs, delegate outputs) and, with `plan_inputs`,
// the graph inputs (copied in by the runtime, their bytes reused once they are dead, as
// ExecuTorch does); otherwise inputs stay in the caller's buffers (zero copy). Values inside
// delegated regions are the backend's business. Empty `steps` means every node in graph
// order. Throws CompileError with the numbers when the tensors do not fit the regions.
//
// In place: a node whose op is in `in_place_ops` (ops whose kernels read each element before
// writing the same element of the output: element-wise ops on same-shape operands) writes its
// output over a tensor input of the same byte size when the planner can prove that safe: the
// input is planned memory (an earlier step's output, or a planned graph input), this node is
// its last reader and it is not a graph output. Both values then share one placement; a value
// still read later (or the caller's input buffer) keeps the output apart.
GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryRegion>& regions,
                                  uint64_t alignment, const std::vector<Step>& steps = {},
                                  const std::vector<DelegateToEmit>& delegates = {},
                                  bool plan_inputs = true,
                                  const std::unordered_set<std::string>& in_place_ops = {});

}  // namespace pteron::compiler
