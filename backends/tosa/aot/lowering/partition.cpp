// The partition side: whether one node lowers (the lowering itself run on the node and its
// Q/DQ neighbours) and the whole-graph selection of one convex region.
#include <algorithm>
#include <unordered_set>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot {

using namespace detail;

namespace {

// The nodes a single-op check lowers with `node`: the dequantizes feeding it and, for INT, the
// activation and quantize after it.
std::vector<NodeId> neighbourhood(const Graph& g, const Node& node, TosaProfile profile) {
  std::vector<NodeId> nodes;
  if (profile == TosaProfile::Int) {
    for (ValueId v : node.inputs()) {
      const ir::Value& value = g.value(v);
      if (!value.is_intermediate()) continue;
      const Node& p = g.node(value.producer);
      if (is_op(p, kDequant) || is_op(p, kDequantChannel)) nodes.push_back(p.id);
    }
  }
  nodes.push_back(node.id);
  if (profile == TosaProfile::Int && !node.outputs.empty() && node.outputs[0] != ir::kNoValue) {
    ValueId v = node.outputs[0];
    for (int step = 0; step < 2; ++step) {
      const ir::Value& value = g.value(v);
      if (value.users.size() != 1) break;
      const Node& u = g.node(value.users[0]);
      if (step == 0 && activation_bounds(u) && fuses_activation(node.op.str())) {
        nodes.push_back(u.id);
        v = u.outputs[0];
        continue;
      }
      if (is_op(u, kQuant)) nodes.push_back(u.id);
      break;
    }
  }
  std::sort(nodes.begin(), nodes.end(), [&](NodeId a, NodeId b) {
    const auto& order = g.nodes();
    return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
  });
  return nodes;
}

}  // namespace

compiler::SupportDecision tosa_supports(const Graph& graph, const Node& node, TosaProfile profile) {
  using compiler::SupportDecision;
  const std::string op = node.op.str();
  const std::string prefix = std::string("TOSA ") + profile_name(profile) + ": ";
  if (op == kQuant || op == kDequant || op == kDequantChannel) {
    if (profile == TosaProfile::Fp)
      return SupportDecision::no(prefix + op + ": quantized ops belong to the INT profile");
    if (op != kDequantChannel && !per_tensor_qparams(node))
      return SupportDecision::no(prefix + op + ": " + qdq_reason(node));
    if (op == kQuant) {
      const ir::Value& in = graph.value(node.arg("input").tensor());
      if (!in.is_intermediate())
        return SupportDecision::no(prefix +
                                   "quantize of a float graph input (the INT profile "
                                   "has no float tensors): stays on the CPU");
      // A quantize belongs to the op before it: supported when that op is.
      const Node& p = graph.node(in.producer);
      if (is_op(p, kDequant)) return SupportDecision::yes();
      return tosa_supports(graph, p, profile);
    }
    const ValueId out = node.outputs[0];
    if (op == kDequant && is_graph_output(graph, out))
      return SupportDecision::no(prefix +
                                 "dequantize to a float graph output (the INT profile "
                                 "has no float tensors): stays on the CPU");
    // A dequantize belongs to its readers: with one of them on the CPU, its float result would
    // leave the region, which INT cannot express.
    for (NodeId u : graph.value(out).users) {
      const Node& reader = graph.node(u);
      if (is_op(reader, kQuant)) continue;  // dequantize -> quantize: a requantisation
      if (!tosa_supports(graph, reader, profile).supported)
        return SupportDecision::no(prefix + "its reader " + reader.describe() +
                                   " stays on the CPU");
    }
    return SupportDecision::yes();
  }
  // An activation fused into the op before it is supported when that op is.
  if (profile == TosaProfile::Int && activation_bounds(node)) {
    const ir::Value& in = graph.value(node.arg("self").tensor());
    if (in.is_intermediate()) {
      const Node& p = graph.node(in.producer);
      if (fuses_activation(p.op.str()) && in.users.size() == 1)
        return tosa_supports(graph, p, profile);
    }
  }
  const TosaLowering l = lower(graph, neighbourhood(graph, node, profile), profile, true);
  if (l.ok) return SupportDecision::yes();
  // The reason without the node description (the caller names the node).
  std::string why = l.reason;
  const std::string described = node.describe() + ": ";
  if (why.rfind(described, 0) == 0) why = why.substr(described.size());
  return SupportDecision::no(prefix + why);
}

TosaSelection select_tosa_nodes(const Graph& graph, TosaProfile profile) {
  TosaSelection sel;
  std::unordered_set<NodeId> chosen;
  // Nodes left outside that depend on a chosen node: a node reading one of them cannot join,
  // or the region would feed the CPU and read its result (a cycle once contracted). Reading
  // other outside nodes (e.g. a quantize of a graph input) is a plain region input.
  std::unordered_set<NodeId> tainted;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    compiler::SupportDecision d = tosa_supports(graph, n, profile);
    bool after_region = false;
    for (ValueId v : n.inputs()) {
      const ir::Value& value = graph.value(v);
      if (!value.is_intermediate()) continue;
      if (chosen.count(value.producer) || tainted.count(value.producer)) after_region = true;
      if (d.supported && tainted.count(value.producer)) {
        d = compiler::SupportDecision::no("reads '" + value.name +
                                          "', which the CPU computes from the TOSA region's "
                                          "results (one region only)");
      }
    }
    if (d.supported) {
      chosen.insert(id);
      sel.nodes.push_back(id);
    } else {
      if (after_region) tainted.insert(id);
      sel.refusals.push_back(n.describe() + ": " + d.reason);
    }
  }
  // INT: a dequantize whose reader stayed outside would make a float region output; it stays
  // outside with its reader.
  if (profile == TosaProfile::Int) {
    std::vector<NodeId> kept;
    for (NodeId id : sel.nodes) {
      const Node& n = graph.node(id);
      bool outside_reader = false;
      if (is_op(n, kDequant) || is_op(n, kDequantChannel)) {
        for (NodeId u : graph.value(n.outputs[0]).users)
          if (!chosen.count(u)) outside_reader = true;
      }
      if (outside_reader) {
        chosen.erase(id);
        sel.refusals.push_back(n.describe() + ": TOSA INT: its reader stays on the CPU");
      } else {
        kept.push_back(id);
      }
    }
    sel.nodes = std::move(kept);
  }
  return sel;
}

}  // namespace pteron::tosa_aot
