// Views without a kernel: a view whose output is its input's bytes (or a contiguous run of
// them) reinterpreted needs no copy. The planner gives the output the input's memory (at a
// byte offset for a leading-dim slice or select) and the view node gets no instruction, as
// ExecuTorch's et_view does at run time, but decided at compile time: the program stays a
// plain list of kernel calls over planned tensors that any ExecuTorch runtime runs.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct MemoryView {
  ir::NodeId node = ir::kNoNode;      // the view node, which gets no instruction
  ir::ValueId source = ir::kNoValue;  // the tensor whose memory the view's output shares
  uint64_t byte_offset = 0;           // where the output starts in the source's bytes
};

// The kernel steps that can be memory views, by output value: view / _unsafe_view / reshape /
// squeeze / unsqueeze / alias, a permute that moves only size-1 dims, and a slice (step 1) or
// select whose dims before `dim` all have size 1, offset a multiple of `alignment`. Both
// tensors static, contiguous, one dtype; the source planned memory (a step's output, or a
// graph input with `plan_inputs`) and no state. A graph output is a view only of an
// intermediate that is no graph output and backs no other output view (outputs keep distinct
// memory). A view of a chosen view is chosen too (offsets add up).
std::unordered_map<ir::ValueId, MemoryView> find_memory_views(
    const ir::Graph& graph, const std::vector<Step>& steps,
    const std::vector<DelegateToEmit>& delegates, bool plan_inputs, uint64_t alignment);

// `steps` less the view nodes in `views`.
std::vector<Step> steps_without_views(const std::vector<Step>& steps,
                                      const std::unordered_map<ir::ValueId, MemoryView>& views);

}  // namespace pteron::compiler
