// Views without a copy: a view whose output is its input's bytes (or a contiguous run of
// them) reinterpreted needs no copy. The planner gives the output the input's memory (at a
// byte offset for a leading-dim slice or select) and a static view node gets no instruction,
// as ExecuTorch's et_view does at run time, but decided at compile time: the program stays a
// plain list of kernel calls over planned tensors that any ExecuTorch runtime runs. A view of
// a dynamic tensor (bounded dynamic shapes) has sizes known only at run time, so it keeps one
// instruction, ExecuTorch's own executorch_prim::et_view.default(self, size, out), which
// resizes out to the sizes the method's prologue computed and points it at self's bytes.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/partition/schedule.h"

namespace pteron::compiler {

struct MemoryView {
  ir::NodeId node = ir::kNoNode;      // the view node, which gets no instruction
  ir::ValueId source = ir::kNoValue;  // the tensor whose memory the view's output shares
  uint64_t byte_offset = 0;           // where the output starts in the source's bytes
  bool dynamic = false;               // needs an et_view instruction (run-time sizes)
};

// The kernel steps that can be memory views, by output value: view / _unsafe_view / reshape /
// squeeze / unsqueeze / alias, a permute that moves only size-1 dims, and a slice (step 1) or
// select whose dims before `dim` all have size 1, offset a multiple of `alignment`. Both
// tensors contiguous, one dtype, static or (reshape-like ops only, at offset 0) dynamic with
// every symbolic size of the output recorded; the source planned memory (a step's output, or a
// graph input with `plan_inputs`) and no state. A graph output is a view only of an
// intermediate that is no graph output and backs no other output view (outputs keep distinct
// memory). A view of a chosen view is chosen too (offsets add up).
std::unordered_map<ir::ValueId, MemoryView> find_memory_views(
    const ir::Graph& graph, const std::vector<Step>& steps,
    const std::vector<LoweredDelegate>& delegates, bool plan_inputs, uint64_t alignment);

// `steps` less the static view nodes in `views` (dynamic ones keep their et_view step).
std::vector<Step> steps_without_views(const std::vector<Step>& steps,
                                      const std::unordered_map<ir::ValueId, MemoryView>& views);

// Rewrites each dynamic view's node into executorch_prim::et_view.default(self, size) with
// the output's symbolic sizes, so the emitter gives it ExecuTorch's et_view kernel call.
// Returns how many nodes it rewrote.
int use_et_view_for_dynamic_views(ir::Graph& graph,
                                  const std::unordered_map<ir::ValueId, MemoryView>& views);

}  // namespace pteron::compiler
