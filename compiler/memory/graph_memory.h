// Plans the memory of a graph's tensors: lifetimes from the execution order, then the offset
// planner. Constants live in the program.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/in_place.h"
#include "compiler/memory/memory_planner.h"
#include "compiler/memory/memory_views.h"
#include "compiler/partition/schedule.h"

namespace pteron::compiler {

// Where a program's state (mutable buffers) lives: an arena of its own after the target's,
// laid out by buffer name, so every method of a program finds a buffer at the same offset and
// a host sharing that arena between methods shares the state (ExecuTorch's
// share_mutable_buffers puts it in memory id 2, after the one activation arena). Nothing
// else is planned there: state is alive for the whole life of a loaded program.
struct StateLayout {
  uint32_t mem_id = 0;                      // 0 while there is no state
  std::map<std::string, uint64_t> offsets;  // buffer name (fqn) -> byte offset
  uint64_t bytes = 0;
};

// Lays out the state values of `graphs` (the methods of one program) in memory id `mem_id`.
// Throws CompileError when one buffer name has two shapes or dtypes.
StateLayout layout_state(const std::vector<const ir::Graph*>& graphs, uint32_t mem_id,
                         uint64_t alignment);

// True when mutation `m`'s new value can be computed straight into the buffer's memory (a state
// value's, or an input's the model writes into), so a
// cache write costs the rows written, not a copy of the cache: the new value is the output of
// a kernel step (not a delegate) of a scatter-style op (index_put, index_copy, slice_scatter,
// select_scatter, scatter, scatter_add, scatter_reduce, copy) whose `self` is the buffer and
// which reads the buffer through no other argument; no step after it reads the buffer's old
// value; the buffer is no graph output and the new value updates no other buffer. Those
// kernels copy self into out first, then write, and skip the copy when out is self.
bool updates_state_in_place(const ir::Graph& graph, const std::vector<Step>& steps,
                            const std::vector<LoweredDelegate>& delegates,
                            const ir::BufferMutation& m);

// Makes every buffer mutation an in-place update: a new value that cannot be computed in the
// buffer's memory is copied into it (aten::copy) by a step appended to `steps` (empty: every
// node in graph order). Returns the number of copies added.
int insert_state_write_backs(ir::Graph& graph, std::vector<Step>& steps,
                             const std::vector<LoweredDelegate>& delegates);

// Op name ("ns::op.overload") -> the rule of its kernel (KernelLibrary::in_place_ops).
using InPlaceRules = std::unordered_map<std::string, InPlaceRule>;

struct GraphMemoryPlan {
  MemoryPlan plan;
  std::unordered_map<ir::ValueId, TensorPlacement> placements;
  std::vector<int64_t> arena_sizes;  // per arena, in the target's order, then the state arena
  uint64_t state_bytes = 0;
  std::unordered_map<ir::ValueId, ir::ValueId> in_place;  // output -> the input it overwrites
  size_t views = 0;                                       // view outputs placed in their source
};

// Plans the values the steps produce (node outputs, delegate outputs) and, with `plan_inputs`,
// the graph inputs (copied in by the runtime, their bytes reused once they are dead, as
// ExecuTorch does); otherwise inputs stay in the caller's buffers (zero copy). Values inside
// delegated regions are the backend's business. Empty `steps` means every node in graph
// order. Throws CompileError with the numbers when the tensors do not fit the arenas.
// State values and the in-place updates of them (every mutation must be one: see
// insert_state_write_backs) go to the state arena at `state`'s offsets (laid out from this
// graph alone when null). An input the model writes into (a mutation of an input) is planned
// until the end, its new value at its bytes; that needs `plan_inputs`.
//
// In place: a node whose op has a rule in `in_place_ops` may write its output over a tensor
// input, starting the rule's bytes before it (0 for element-wise ops: the same bytes), where
// the planner can prove that safe: the input is planned memory (an earlier step's output, or a
// planned graph input), this node is its last reader and it is not a graph output. The offset
// planner then takes that overlap where best fit finds it smallest (InPlacePair); a value still
// read later (or the caller's input buffer) keeps the output apart. `in_place` lists the
// outputs that did overlap an input.
//
// Views (find_memory_views; their nodes left out of `steps`): a view's output is placed at its
// source's placement plus the view's byte offset, and reading it keeps the source alive, so the
// in-place rule above sees those reads too.
GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryArena>& arenas,
                                  uint64_t alignment, const std::vector<Step>& steps = {},
                                  const std::vector<LoweredDelegate>& delegates = {},
                                  bool plan_inputs = true, const StateLayout* state = nullptr,
                                  const InPlaceRules& in_place_ops = {},
                                  const std::unordered_map<ir::ValueId, MemoryView>& views = {});

}  // namespace pteron::compiler
