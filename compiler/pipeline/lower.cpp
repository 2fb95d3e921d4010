// Stage 2: partitioning, and each region lowered to its backend's payload.
#include <algorithm>

#include "compiler/compile_error.h"
#include "compiler/pipeline/pipeline.h"

namespace pteron::compiler {
namespace {

// Gives a region's boundary tensors the dim orders its payload expects: an input in another
// dim order is copied into a converted value just before the region reads it; an output takes
// the expected dim order and its readers outside the region get a copy in the old one.
// The copies are dim_order_ops::_clone_dim_order kernel calls, outside the delegate.
void convert_boundary_dim_orders(ir::Graph& graph, Region& region, const LoweredRegion& lowered) {
  const ir::OpSchema* clone =
      ir::OpSchemaRegistry::global().find("dim_order_ops::_clone_dim_order.default");
  const std::unordered_set<ir::NodeId> members(region.nodes.begin(), region.nodes.end());
  const auto convert = [&](ir::ValueId from, const std::vector<uint8_t>& order, ir::NodeId before,
                           const ir::DebugHandle& debug) {
    const ir::Value& v = graph.value(from);
    ir::TensorSpec spec = v.spec;
    spec.dim_order = order;
    const std::vector<int64_t> order_arg(order.begin(), order.end());
    const ir::NodeId n = graph.add_node(
        *clone, {ir::TensorRef{from}, false, order_arg},
        {ir::NewValue{graph.unique_name(v.name + "_dim_order"), spec}}, debug, before);
    return graph.node(n).outputs[0];
  };
  const auto repoint = [&](ir::NodeId user, ir::ValueId from, ir::ValueId to) {
    const std::vector<ir::Argument> args = graph.node(user).args;
    for (size_t k = 0; k < args.size(); ++k) {
      ir::Argument a = args[k];
      if (a.replace_value(from, to) > 0) graph.set_arg(user, k, std::move(a));
    }
  };
  const std::vector<ir::NodeId>& order = graph.nodes();
  const auto position = [&](ir::NodeId n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  for (size_t i = 0; i < region.inputs.size() && i < lowered.input_dim_orders.size(); ++i) {
    const ir::ValueId v = region.inputs[i];
    const std::vector<uint8_t>& want = lowered.input_dim_orders[i];
    if (want.empty() || want == graph.value(v).spec.dim_order) continue;
    std::vector<ir::NodeId> readers;
    for (ir::NodeId u : graph.value(v).users) {
      if (members.count(u)) readers.push_back(u);
    }
    if (readers.empty()) continue;
    const ir::NodeId first =
        *std::min_element(readers.begin(), readers.end(),
                          [&](ir::NodeId a, ir::NodeId b) { return position(a) < position(b); });
    const ir::ValueId converted = convert(v, want, first, graph.node(first).debug);
    for (ir::NodeId u : readers) repoint(u, v, converted);
    region.inputs[i] = converted;
  }
  for (size_t j = 0; j < region.outputs.size() && j < lowered.output_dim_orders.size(); ++j) {
    const ir::ValueId v = region.outputs[j];
    const std::vector<uint8_t>& want = lowered.output_dim_orders[j];
    const ir::TensorSpec old = graph.value(v).spec;
    if (want.empty() || want == old.dim_order) continue;
    ir::TensorSpec spec = old;
    spec.dim_order = want;
    graph.set_spec(v, spec);
    std::vector<ir::NodeId> readers;
    for (ir::NodeId u : graph.value(v).users) {
      if (!members.count(u)) readers.push_back(u);
    }
    const std::vector<ir::ValueId>& outs = graph.outputs();
    const bool graph_output = std::find(outs.begin(), outs.end(), v) != outs.end();
    if (readers.empty() && !graph_output) continue;
    ir::NodeId before = ir::kNoNode;
    if (!readers.empty()) {
      before = *std::min_element(readers.begin(), readers.end(), [&](ir::NodeId a, ir::NodeId b) {
        return position(a) < position(b);
      });
    }
    const ir::ValueId converted =
        convert(v, old.dim_order, before, graph.node(graph.value(v).producer).debug);
    for (ir::NodeId u : readers) repoint(u, v, converted);
    if (graph_output) {
      std::vector<ir::ValueId> new_outs = outs;
      for (ir::ValueId& o : new_outs) o = o == v ? converted : o;
      graph.set_outputs(new_outs);
    }
  }
}

// A partitioner's lowering of one region: a Refusal thrown at any depth gives the region back
// with its reason; any other exception fails the compile, naming the region's first node (the
// lowering names the node at fault inside it where it knows).
LoweredRegion lower_region(const Partitioner& p, const ir::Graph& graph, const Region& region,
                           const PartitionContext& context) {
  try {
    return p.lower(graph, region, context);
  } catch (const Refusal& r) {
    LoweredRegion refused;
    refused.reason = r.what();
    return refused;
  } catch (const std::exception& e) {
    throw CompileError(graph.node(region.nodes.front()).describe() + ": " + p.label() +
                       ": lowering its region of " + std::to_string(region.nodes.size()) +
                       " node(s) failed: " + e.what());
  }
}

}  // namespace

LoweredGraph partition_and_lower(ir::Graph& graph,
                                 const std::vector<const Partitioner*>& partitioners,
                                 const PartitionContext& context) {
  LoweredGraph out;
  PartitionResult parts = partition(graph, partitioners, context);
  // A partitioner's prepare sees all its regions before lower runs on each (Ethos-U: one Vela
  // process per program).
  for (size_t i = 0; i < partitioners.size(); ++i) {
    std::vector<Region> claimed;
    for (Region region : parts.regions) {
      if (region.partitioner != i) continue;
      compute_region_boundary(graph, region);
      claimed.push_back(std::move(region));
    }
    if (!claimed.empty()) partitioners[i]->prepare(graph, claimed, context);
  }
  for (Region region : parts.regions) {
    const Partitioner& p = *partitioners[region.partitioner];
    compute_region_boundary(graph, region);  // earlier regions may have added conversions
    LoweredRegion lowered = lower_region(p, graph, region, context);
    if (!lowered.ok) {
      for (ir::NodeId n : region.nodes)
        parts.refusals[n].push_back(p.label() + ": " + lowered.reason);
      continue;
    }
    convert_boundary_dim_orders(graph, region, lowered);
    const size_t index = out.kept.regions.size();
    for (ir::NodeId n : region.nodes) {
      out.kept.region_of[n] = index;
      out.delegated.insert(n);
    }
    out.kept.regions.push_back(region);
    out.region_backend.push_back(p.label());
    out.region_backend_id.push_back(p.backend_id());
    out.delegates.push_back(LoweredDelegate{p.backend_id(), std::move(lowered.payload),
                                            std::move(lowered.compile_specs), region.inputs,
                                            region.outputs, std::move(lowered.named_data)});
    out.summaries.push_back({p.label(), region.nodes.size(), region.inputs.size(),
                             region.outputs.size(), std::move(lowered.report_json)});
  }
  out.refusals = std::move(parts.refusals);
  return out;
}

}  // namespace pteron::compiler
