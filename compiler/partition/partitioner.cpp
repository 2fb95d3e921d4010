#include "compiler/partition/partitioner.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <unordered_set>

#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

// Union-find over node ids, one set per region being grown.
class RegionSets {
 public:
  explicit RegionSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

// Groups of nodes that execute as one unit once regions are contracted: a region of an earlier
// partitioner, a region being grown now, or a single node.
struct Units {
  const std::function<int64_t(ir::NodeId)>& unit_of;
  const std::function<const std::unordered_set<ir::NodeId>&(int64_t)>& members;
};

// Merging is legal only if no path leaves the merged set and comes back into it, where a path
// entering any unit continues from every node of that unit (units run as one call). Such a
// path would make the contracted graph cyclic.
bool merge_keeps_acyclic(const ir::Graph& g, const std::unordered_set<ir::NodeId>& merged,
                         const Units& units) {
  std::unordered_map<int64_t, bool> memo;  // does this unit descend from `merged`?
  std::function<bool(int64_t)> descends = [&](int64_t unit) -> bool {
    if (auto it = memo.find(unit); it != memo.end()) return it->second;
    memo[unit] = false;
    bool result = false;
    for (ir::NodeId n : units.members(unit)) {
      for (ir::ValueId v : g.node(n).inputs()) {
        const ir::Value& value = g.value(v);
        if (!value.is_intermediate()) continue;
        const int64_t from = units.unit_of(value.producer);
        if (from == unit) continue;
        if (merged.count(value.producer) || descends(from)) {
          result = true;
          break;
        }
      }
      if (result) break;
    }
    memo[unit] = result;
    return result;
  };
  for (ir::NodeId n : merged) {
    for (ir::ValueId v : g.node(n).inputs()) {
      const ir::Value& value = g.value(v);
      if (!value.is_intermediate() || merged.count(value.producer)) continue;
      if (descends(units.unit_of(value.producer))) return false;
    }
  }
  return true;
}

// What a partitioner says of one node: a Refusal thrown at any depth is a refusal with its
// reason; any other exception fails the compile, naming the node (a lowering bug must not
// silently become CPU fallback).
SupportDecision ask_supports(const Partitioner& part, const ir::Graph& g, const ir::Node& node,
                             const PartitionContext& context) {
  try {
    return part.supports(g, node, context);
  } catch (const Refusal& r) {
    return SupportDecision::no(r.what());
  } catch (const std::exception& e) {
    throw CompileError(node.describe() + ": " + part.label() +
                       ": support check failed (an internal error, not a refusal): " + e.what());
  }
}

SupportDecision ask_worth_delegating(const Partitioner& part, const ir::Graph& g,
                                     const Region& region, const PartitionContext& context) {
  try {
    return part.worth_delegating(g, region, context);
  } catch (const Refusal& r) {
    return SupportDecision::no(r.what());
  } catch (const std::exception& e) {
    throw CompileError(
        g.node(region.nodes.front()).describe() + ": " + part.label() +
        ": cost rule failed on its region (an internal error, not a refusal): " + e.what());
  }
}

}  // namespace

std::string Partitioner::label() const {
  std::string out = name();
  for (const auto& [key, value] : options_) out += ":" + key + "=" + value;
  return out;
}

bool PartitionContext::has_kernel_library(const std::string& name) const {
  return std::find(kernel_libraries.begin(), kernel_libraries.end(), name) !=
         kernel_libraries.end();
}

void compute_region_boundary(const ir::Graph& g, Region& region) {
  const std::unordered_set<ir::NodeId> members(region.nodes.begin(), region.nodes.end());
  // A buffer's new value leaves the region too: the state write-back reads it.
  std::unordered_set<ir::ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  for (const ir::BufferMutation& m : g.buffer_mutations()) graph_outputs.insert(m.new_value);
  region.inputs.clear();
  region.outputs.clear();
  std::unordered_set<ir::ValueId> seen;
  for (ir::NodeId n : region.nodes) {
    for (ir::ValueId v : g.node(n).inputs()) {
      const ir::Value& value = g.value(v);
      if (value.is_constant()) continue;
      if (value.is_intermediate() && members.count(value.producer)) continue;
      if (seen.insert(v).second) region.inputs.push_back(v);
    }
    for (ir::ValueId v : g.node(n).outputs) {
      if (v == ir::kNoValue) continue;
      const ir::Value& value = g.value(v);
      const bool used_outside =
          graph_outputs.count(v) || std::any_of(value.users.begin(), value.users.end(),
                                                [&](ir::NodeId u) { return !members.count(u); });
      if (used_outside) region.outputs.push_back(v);
    }
  }
}

PartitionResult partition(const ir::Graph& g, const std::vector<const Partitioner*>& partitioners,
                          const PartitionContext& context) {
  PartitionResult result;
  std::unordered_map<ir::NodeId, std::vector<std::string>> reasons;
  std::unordered_set<ir::NodeId> claimed;

  for (size_t p = 0; p < partitioners.size(); ++p) {
    const Partitioner& part = *partitioners[p];
    std::unordered_set<ir::NodeId> candidates;
    for (ir::NodeId n : g.nodes()) {
      if (claimed.count(n)) continue;
      if (!part.supports_dynamic_shapes() && g.is_dynamic_node(n)) {
        reasons[n].push_back(part.label() + ": " + part.dynamic_shape_refusal());
        continue;
      }
      SupportDecision d = ask_supports(part, g, g.node(n), context);
      if (d.supported)
        candidates.insert(n);
      else
        reasons[n].push_back(part.label() + ": " + d.reason);
    }
    // Grow regions in topological order: a node joins its producers' regions when the merged
    // region stays acyclic with the rest of the graph.
    RegionSets sets(g.node_capacity());
    std::unordered_map<size_t, std::unordered_set<ir::NodeId>> members;  // set root -> nodes
    // Unit ids: earlier regions are negative, nodes of this pass map to their set root, other
    // nodes to themselves (ids are disjoint because set roots are node ids of candidates).
    std::unordered_map<int64_t, std::unordered_set<ir::NodeId>> singles;
    std::vector<std::unordered_set<ir::NodeId>> earlier;
    for (const Region& r : result.regions) earlier.emplace_back(r.nodes.begin(), r.nodes.end());
    const std::function<int64_t(ir::NodeId)> unit_of = [&](ir::NodeId n) -> int64_t {
      if (auto it = result.region_of.find(n); it != result.region_of.end())
        return -static_cast<int64_t>(it->second) - 1;
      return candidates.count(n) ? static_cast<int64_t>(sets.find(n)) : static_cast<int64_t>(n);
    };
    const std::function<const std::unordered_set<ir::NodeId>&(int64_t)> unit_members =
        [&](int64_t u) -> const std::unordered_set<ir::NodeId>& {
      if (u < 0) return earlier[static_cast<size_t>(-u - 1)];
      if (auto it = members.find(static_cast<size_t>(u)); it != members.end()) return it->second;
      auto [it, inserted] = singles.try_emplace(u);
      if (inserted) it->second.insert(static_cast<ir::NodeId>(u));
      return it->second;
    };
    const Units units{unit_of, unit_members};
    for (ir::NodeId n : g.nodes()) {
      if (!candidates.count(n)) continue;
      members[sets.find(n)].insert(n);
      for (ir::ValueId v : g.node(n).inputs()) {
        const ir::Value& value = g.value(v);
        if (!value.is_intermediate() || !candidates.count(value.producer)) continue;
        const size_t a = sets.find(n), b = sets.find(value.producer);
        if (a == b) continue;
        std::unordered_set<ir::NodeId> merged = members[a];
        merged.insert(members[b].begin(), members[b].end());
        if (!merge_keeps_acyclic(g, merged, units)) continue;
        sets.unite(a, b);
        const size_t root = sets.find(n);
        members.erase(a == root ? b : a);
        members[root] = std::move(merged);
      }
    }
    // Materialise regions in the order of their first node; apply the backend's cost rule.
    std::vector<std::pair<size_t, Region>> grown;
    std::unordered_map<size_t, size_t> slot;
    for (ir::NodeId n : g.nodes()) {
      if (!candidates.count(n)) continue;
      const size_t root = sets.find(n);
      auto [it, inserted] = slot.try_emplace(root, grown.size());
      if (inserted) grown.push_back({root, Region{p, {}, {}, {}, {}}});
      grown[it->second].second.nodes.push_back(n);
    }
    for (auto& [root, region] : grown) {
      compute_region_boundary(g, region);
      // PTERON_IGNORE_COST_RULES=1 keeps every supported region, however small: what the
      // operator conformance suite (tests/conformance) sets to check each delegate on the ops
      // it claims, which alone would never repay a delegate call.
      static const bool ignore_cost = [] {
        const char* v = std::getenv("PTERON_IGNORE_COST_RULES");
        return v != nullptr && v[0] == '1';
      }();
      SupportDecision keep =
          ignore_cost ? SupportDecision::yes() : ask_worth_delegating(part, g, region, context);
      if (!keep.supported) {
        for (ir::NodeId n : region.nodes) reasons[n].push_back(part.label() + ": " + keep.reason);
        continue;
      }
      region.kept_because = std::move(keep.report_json);
      const size_t index = result.regions.size();
      for (ir::NodeId n : region.nodes) {
        claimed.insert(n);
        result.region_of[n] = index;
        reasons.erase(n);
      }
      result.regions.push_back(std::move(region));
    }
  }
  for (auto& [node, why] : reasons) {
    if (!claimed.count(node)) result.refusals[node] = std::move(why);
  }
  return result;
}

std::vector<ir::NodeId> contracted_order(const ir::Graph& g, const PartitionResult& result) {
  // Kahn's algorithm over units (a free node, or a whole region), preferring graph order.
  auto unit_of = [&](ir::NodeId n) -> int64_t {
    auto it = result.region_of.find(n);
    return it == result.region_of.end() ? -static_cast<int64_t>(n) - 1
                                        : static_cast<int64_t>(it->second);
  };
  std::unordered_map<int64_t, std::unordered_set<int64_t>> successors;
  std::unordered_map<int64_t, int> indegree;
  std::vector<int64_t> units;
  std::unordered_map<int64_t, ir::NodeId> first_node;
  for (ir::NodeId n : g.nodes()) {
    const int64_t u = unit_of(n);
    if (first_node.try_emplace(u, n).second) {
      units.push_back(u);
      indegree[u];
    }
  }
  for (ir::NodeId n : g.nodes()) {
    const int64_t u = unit_of(n);
    for (ir::ValueId v : g.node(n).inputs()) {
      const ir::Value& value = g.value(v);
      if (!value.is_intermediate()) continue;
      const int64_t from = unit_of(value.producer);
      if (from != u && successors[from].insert(u).second) ++indegree[u];
    }
  }
  std::vector<ir::NodeId> order;
  std::vector<bool> done(units.size(), false);
  while (order.size() < units.size()) {
    bool progressed = false;
    for (size_t i = 0; i < units.size(); ++i) {
      if (done[i] || indegree[units[i]] != 0) continue;
      done[i] = true;
      progressed = true;
      order.push_back(first_node[units[i]]);
      for (int64_t s : successors[units[i]]) --indegree[s];
      break;  // restart from the front: keeps graph order where possible
    }
    if (!progressed) break;  // cannot happen for partitions built by partition()
  }
  return order;
}

}  // namespace pteron::compiler
