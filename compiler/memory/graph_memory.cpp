#include "compiler/memory/graph_memory.h"

#include <algorithm>

#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {
namespace {

std::vector<Step> steps_or_graph_order(const ir::Graph& graph, const std::vector<Step>& steps) {
  if (!steps.empty()) return steps;
  std::vector<Step> all;
  for (ir::NodeId id : graph.nodes()) all.push_back(Step{id, -1});
  return all;
}

std::vector<ir::ValueId> step_inputs(const ir::Graph& graph, const Step& s,
                                     const std::vector<LoweredDelegate>& delegates) {
  return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].inputs
                         : graph.node(s.node).inputs();
}

// Ops whose out-variant kernel starts with out = self and then writes into out, so out may be
// self's memory (kernels/portable/util/scatter.h).
bool writes_into_self(const ir::Node& node) {
  for (ir::OpName op : {ops::aten::index_put, ops::aten::index_copy, ops::aten::slice_scatter,
                        ops::aten::select_scatter, ops::aten::scatter_src, ops::aten::scatter_value,
                        ops::aten::scatter_add, ops::aten::scatter_reduce_two, ops::aten::copy}) {
    if (node.is(op)) return true;
  }
  return false;
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

StateLayout layout_state(const std::vector<const ir::Graph*>& graphs, uint32_t mem_id,
                         uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  StateLayout layout;
  std::map<std::string, ir::TensorSpec> specs;
  for (const ir::Graph* g : graphs) {
    for (ir::ValueId v : g->states()) {
      const ir::Value& value = g->value(v);
      const std::string& fqn = value.initial->fqn;
      auto [it, inserted] = specs.try_emplace(fqn, value.spec);
      if (!inserted) {
        if (it->second.dtype != value.spec.dtype || it->second.sizes != value.spec.sizes) {
          throw CompileError("buffer '" + fqn + "' is " + ir::to_string(it->second) +
                             " in one method and " + ir::to_string(value.spec) +
                             " in another; methods share a buffer only with one shape");
        }
        continue;
      }
      layout.offsets[fqn] = layout.bytes;
      layout.bytes = align_up(layout.bytes + value.spec.nbytes(), alignment);
    }
  }
  if (!layout.offsets.empty()) layout.mem_id = mem_id;
  return layout;
}

bool updates_state_in_place(const ir::Graph& graph, const std::vector<Step>& given_steps,
                            const std::vector<LoweredDelegate>& delegates,
                            const ir::BufferMutation& m) {
  const ir::Value& out = graph.value(m.new_value);
  if (!out.is_intermediate()) return false;
  const ir::Node& producer = graph.node(out.producer);
  if (!writes_into_self(producer) || out.producer_output != 0 || producer.args.empty() ||
      producer.args[0].kind() != ir::ArgKind::Tensor || producer.args[0].tensor() != m.buffer) {
    return false;
  }
  bool reads_elsewhere = false;
  for (size_t k = 1; k < producer.args.size(); ++k)
    producer.args[k].for_each_value([&](ir::ValueId v) { reads_elsewhere |= v == m.buffer; });
  if (reads_elsewhere) return false;
  const std::vector<ir::ValueId>& outs = graph.outputs();
  if (std::find(outs.begin(), outs.end(), m.buffer) != outs.end()) return false;
  for (const ir::BufferMutation& other : graph.buffer_mutations()) {
    if (other.buffer != m.buffer && other.new_value == m.new_value) {
      // One value, two buffers: only the first takes it in place.
      if (other.buffer < m.buffer) return false;
    }
  }
  // The producer must be a kernel step; after it, nothing may read the old value.
  const std::vector<Step> steps = steps_or_graph_order(graph, given_steps);
  size_t at = steps.size();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].delegate < 0 && steps[i].node == producer.id) at = i;
  }
  if (at == steps.size()) return false;
  for (size_t i = at + 1; i < steps.size(); ++i) {
    for (ir::ValueId v : step_inputs(graph, steps[i], delegates))
      if (v == m.buffer) return false;
  }
  return true;
}

int insert_state_write_backs(ir::Graph& graph, std::vector<Step>& steps,
                             const std::vector<LoweredDelegate>& delegates) {
  if (graph.buffer_mutations().empty()) return 0;
  if (steps.empty()) steps = steps_or_graph_order(graph, steps);
  const ir::OpSchema* copy = ir::OpSchemaRegistry::global().find(ops::aten::copy);
  if (copy == nullptr) throw CompileError("internal: aten::copy.default is not in the op table");
  int added = 0;
  const std::vector<ir::BufferMutation> mutations = graph.buffer_mutations();
  for (const ir::BufferMutation& m : mutations) {
    if (updates_state_in_place(graph, steps, delegates, m)) continue;
    const ir::Value& buffer = graph.value(m.buffer);
    const ir::NodeId n =
        graph.add_node(*copy, {ir::TensorRef{m.buffer}, ir::TensorRef{m.new_value}, false},
                       {ir::NewValue{graph.unique_name(buffer.name + "_write_back"), buffer.spec}});
    graph.set_buffer_mutation(m.buffer, graph.node(n).outputs[0]);
    steps.push_back(Step{n, -1});
    ++added;
  }
  return added;
}

GraphMemoryPlan plan_graph_memory(const ir::Graph& graph, const std::vector<MemoryArena>& arenas,
                                  uint64_t alignment, const std::vector<Step>& given_steps,
                                  const std::vector<LoweredDelegate>& delegates, bool plan_inputs,
                                  const StateLayout* given_state, const InPlaceRules& in_place_ops,
                                  const std::unordered_map<ir::ValueId, MemoryView>& views) {
  const std::vector<Step> steps = steps_or_graph_order(graph, given_steps);
  auto produced = [&](const Step& s) -> std::vector<ir::ValueId> {
    return s.delegate >= 0 ? delegates[static_cast<size_t>(s.delegate)].outputs
                           : graph.node(s.node).outputs;
  };
  // State: its own arena after the target's arenas; the in-place new values share it.
  uint32_t state_mem_id = 1;
  for (const MemoryArena& r : arenas) state_mem_id = std::max(state_mem_id, r.mem_id + 1);
  const StateLayout local =
      given_state ? StateLayout{} : layout_state({&graph}, state_mem_id, alignment);
  const StateLayout& state = given_state ? *given_state : local;
  std::unordered_map<ir::ValueId, TensorPlacement> state_placements;
  for (ir::ValueId v : graph.states()) {
    auto it = state.offsets.find(graph.value(v).initial->fqn);
    if (it == state.offsets.end() || state.mem_id == 0)
      throw CompileError("internal: buffer '" + graph.value(v).name + "' has no state offset");
    state_placements[v] = {state.mem_id, it->second};
  }
  // Inputs the model writes into: the new value is computed in (or copied into) the input's
  // bytes, which stay the input's until the end.
  std::unordered_map<ir::ValueId, ir::ValueId> written_inputs;  // new value -> input
  for (const ir::BufferMutation& m : graph.buffer_mutations()) {
    if (!updates_state_in_place(graph, steps, delegates, m)) {
      throw CompileError("internal: the update of buffer '" + graph.value(m.buffer).name +
                         "' is not in place (insert_state_write_backs first)");
    }
    if (graph.value(m.buffer).is_input()) {
      if (!plan_inputs)
        throw CompileError("the model writes into its input '" + graph.value(m.buffer).name +
                           "' in place, and this target leaves inputs in the caller's buffers "
                           "(plan_inputs is off); clone the input before changing it");
      written_inputs[m.new_value] = m.buffer;
      continue;
    }
    state_placements[m.new_value] = state_placements.at(m.buffer);
  }

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
  // A view's reads are its source's (views of views were resolved by find_memory_views).
  const auto source_of = [&](ir::ValueId v) {
    auto it = views.find(v);
    return it == views.end() ? v : it->second.source;
  };
  for (int i = 0; i < end; ++i) {
    for (ir::ValueId v : step_inputs(graph, steps[static_cast<size_t>(i)], delegates)) {
      if (auto it = index.find(source_of(v)); it != index.end()) lifetimes[it->second].last = i;
    }
    for (ir::ValueId v : produced(steps[static_cast<size_t>(i)])) {
      // A dynamic view's et_view step produces no memory of its own: it is placed below.
      if (v == ir::kNoValue || state_placements.count(v) || views.count(v) ||
          written_inputs.count(v))
        continue;
      index[v] = ids.size();
      ids.push_back(v);
      lifetimes.push_back(TensorLifetime{graph.value(v).spec.nbytes(), i, i});
    }
  }
  for (ir::ValueId v : graph.outputs()) {
    if (auto it = index.find(source_of(v)); it != index.end()) lifetimes[it->second].last = end;
  }
  for (const auto& [value, input] : written_inputs) lifetimes[index.at(input)].last = end;
  GraphMemoryPlan result;
  // In place: a node's output may overlap an input whose lifetime ends at this node (no later
  // step, delegate or graph output reads it), starting at least the bytes before it that the
  // op's rule gives; the planner takes that freedom where it makes the plan smaller.
  std::vector<InPlacePair> pairs;
  for (int i = 0; i < end && !in_place_ops.empty(); ++i) {
    const Step& s = steps[static_cast<size_t>(i)];
    if (s.delegate >= 0) continue;
    const ir::Node& n = graph.node(s.node);
    const auto rule = in_place_ops.find(n.op.str());
    if (rule == in_place_ops.end() || n.outputs.size() != 1) continue;
    const auto out = index.find(n.outputs[0]);
    if (out == index.end()) continue;
    for (ir::ValueId in : n.inputs()) {
      if (views.count(in)) continue;  // a view's bytes are part of another tensor
      const auto it = index.find(in);
      if (it == index.end() || lifetimes[it->second].last != i) continue;
      if (const std::optional<uint64_t> lag = rule->second(graph, n, in))
        pairs.push_back({out->second, it->second, *lag});
    }
  }
  result.plan = plan_memory(lifetimes, arenas, alignment, pairs);
  if (!result.plan.fits)
    throw CompileError("memory plan does not fit the target: " + result.plan.why_not);
  const std::string problem = check_memory_plan(lifetimes, result.plan, pairs);
  if (!problem.empty()) throw CompileError("internal: memory plan check failed: " + problem);
  for (size_t i = 0; i < ids.size(); ++i) {
    const Placement& p = result.plan.placements[i];
    result.placements[ids[i]] = {p.mem_id, p.offset};
  }
  for (const InPlacePair& pair : pairs) {
    const Placement &out = result.plan.placements[pair.output],
                    &in = result.plan.placements[pair.input];
    if (out.mem_id == in.mem_id && out.offset < in.offset + lifetimes[pair.input].bytes &&
        in.offset < out.offset + lifetimes[pair.output].bytes) {
      result.in_place[ids[pair.output]] = ids[pair.input];
    }
  }
  result.plan.in_place_outputs = result.in_place.size();
  for (const auto& [v, view] : views) {
    auto it = result.placements.find(view.source);
    if (it == result.placements.end())
      throw CompileError("internal: view '" + graph.value(v).name + "' has an unplanned source");
    result.placements[v] = {it->second.mem_id, it->second.offset + view.byte_offset};
  }
  result.views = views.size();
  for (const auto& [value, input] : written_inputs)
    result.placements[value] = result.placements.at(input);
  for (const ArenaUsage& r : result.plan.arenas)
    result.arena_sizes.push_back(static_cast<int64_t>(r.used));
  if (state.mem_id != 0) {
    if (result.arena_sizes.size() >= state.mem_id)
      throw CompileError("internal: the state arena's memory id is taken");
    result.arena_sizes.resize(state.mem_id - 1, 0);
    result.arena_sizes.push_back(static_cast<int64_t>(state.bytes));
    result.state_bytes = state.bytes;
    result.plan.arenas.push_back({"state", state.mem_id, 0, state.bytes});
    for (const auto& [v, p] : state_placements) result.placements[v] = p;
  }
  return result;
}

}  // namespace pteron::compiler
