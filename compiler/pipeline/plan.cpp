// Stage 5: the method's memory: views sharing their input's bytes, the arenas' offsets, and the
// allocation-only nodes (a kernel's planned scratch) dropped once placed.
#include "compiler/pipeline/pipeline.h"

namespace pteron::compiler {

MethodMemory plan_method_memory(ir::Graph& graph, std::vector<Step> steps,
                                const std::vector<LoweredDelegate>& delegates, const Target& target,
                                const std::vector<const KernelLibrary*>& libraries,
                                const StateLayout* state_layout) {
  MethodMemory out;
  InPlaceRules in_place_ops;
  for (const KernelLibrary* lib : libraries)
    in_place_ops.insert(lib->in_place_ops.begin(), lib->in_place_ops.end());
  if (target.threaded_kernels) {
    // Only an output that is its input's bytes exactly (same size, lag 0): one starting before
    // its input, or smaller than it, is safe for a walk over the pixels in order, not for tasks
    // on several threads, where one task's output lands on input another has still to read
    // (Target::threaded_kernels).
    for (auto& [op, rule] : in_place_ops) {
      rule = [inner = rule](const ir::Graph& g, const ir::Node& n,
                            ir::ValueId input) -> std::optional<uint64_t> {
        const std::optional<uint64_t> lag = inner(g, n, input);
        const bool same_bytes = n.outputs.size() == 1 &&
                                g.value(input).spec.nbytes() == g.value(n.outputs[0]).spec.nbytes();
        if (lag && *lag == 0 && same_bytes) return lag;
        return std::nullopt;
      };
    }
  }
  // Views that are their input's bytes get no instruction: their outputs share that memory.
  out.views =
      find_memory_views(graph, steps, delegates, target.plan_inputs, target.tensor_alignment);
  out.steps = steps_without_views(steps, out.views);
  out.dynamic_views = use_et_view_for_dynamic_views(graph, out.views);
  out.plan = plan_graph_memory(graph, target.memory, target.tensor_alignment, out.steps, delegates,
                               target.plan_inputs, state_layout, in_place_ops, out.views);
  // Allocation-only nodes (a kernel's planned scratch) had their place in the plan; no
  // instruction runs them.
  std::unordered_set<std::string> allocation_ops;
  for (const KernelLibrary* lib : libraries)
    allocation_ops.insert(lib->allocation_ops.begin(), lib->allocation_ops.end());
  if (!allocation_ops.empty()) {
    std::vector<Step> kept_steps;
    for (const Step& s : out.steps) {
      if (s.delegate >= 0 || !allocation_ops.count(graph.node(s.node).op.str()))
        kept_steps.push_back(s);
    }
    out.allocation_only = out.steps.size() - kept_steps.size();
    out.steps = std::move(kept_steps);
  }
  return out;
}

}  // namespace pteron::compiler
