#include "compiler/report/graph_info.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "compiler/ir/kernel_call_form.h"
#include "compiler/ir/queries.h"
#include "compiler/ir/work.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

using nlohmann::json;

json spec_json(const ir::TensorSpec& spec) {
  return {{"dtype", ir::dtype_name(spec.dtype)}, {"shape", spec.sizes}};
}

// Kernel name ("aten::add.out") -> libraries that register it.
std::map<std::string, std::set<std::string>> kernel_libraries_by_name() {
  std::map<std::string, std::set<std::string>> out;
  for (const KernelEntry& e : registered_kernels()) out[e.name].insert(e.library);
  return out;
}

json values_json(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  json list = json::array();
  for (ir::ValueId v : ids)
    list.push_back({{"name", g.value(v).name}, {"bytes", g.value(v).spec.nbytes()}});
  return list;
}

}  // namespace

std::string graph_info_json(const GraphInfoInput& in) {
  const ir::Graph& g = *in.graph;
  std::unordered_map<ir::NodeId, size_t> index;
  for (size_t i = 0; i < g.nodes().size(); ++i) index[g.nodes()[i]] = i;
  const auto producer_index = [&](ir::ValueId v) -> int64_t {
    const ir::Value& value = g.value(v);
    if (!value.is_intermediate()) return -1;
    auto it = index.find(value.producer);
    return it == index.end() ? -1 : static_cast<int64_t>(it->second);
  };
  const auto libraries = kernel_libraries_by_name();

  json j;
  j["version"] = kGraphInfoVersion;
  j["backends"] = in.backends;
  j["kernel_libraries"] = in.kernel_libraries;
  j["inputs"] = json::array();
  for (ir::ValueId v : g.inputs()) {
    json input = spec_json(g.value(v).spec);
    input["name"] = g.value(v).name;
    j["inputs"].push_back(input);
  }
  j["outputs"] = json::array();
  for (ir::ValueId v : g.outputs()) j["outputs"].push_back(producer_index(v));

  json nodes = json::array();
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& node = g.node(id);
    json n;
    // Output value names are unique; the export node a compiler-made node came from is "from".
    std::string name;
    if (!node.outputs.empty() && node.outputs[0] != ir::kNoValue)
      name = g.value(node.outputs[0]).name;
    n["name"] = name.empty() ? "node" + std::to_string(id) : name;
    n["from"] = node.debug.node_name;
    n["op"] = node.op.str();
    n["module"] = node.debug.module_path;
    n["source"] = node.debug.source;
    n["outputs"] = json::array();
    for (ir::ValueId v : node.outputs) {
      n["outputs"].push_back(v == ir::kNoValue ? json(nullptr) : spec_json(g.value(v).spec));
    }
    n["inputs"] = json::array();
    for (ir::ValueId v : node.inputs()) {
      const int64_t producer = producer_index(v);
      n["inputs"].push_back(producer >= 0 ? json(producer) : json(g.value(v).name));
    }
    n["flops"] = estimate_flops(g, node);
    if (auto r = in.regions->region_of.find(id); r != in.regions->region_of.end()) {
      n["runs_on"] = in.region_backend[r->second];
      n["region"] = r->second;
    } else {
      // The first kernel library, in the compile's order, that has this node's kernel.
      std::vector<std::string> reasons;
      if (auto it = in.refusals->find(id); it != in.refusals->end()) reasons = it->second;
      const ir::OpSchema* schema = kernel_schema_for(node);
      std::string runs_on = "none";
      if (schema != nullptr) {
        auto found =
            libraries.find(schema->op.ns + "::" + schema->op.name + "." + schema->op.overload);
        for (const std::string& lib : in.kernel_libraries) {
          if (found != libraries.end() && found->second.count(lib)) {
            runs_on = lib;
            break;
          }
          reasons.push_back(lib + ": no kernel for " + schema->op.str());
        }
        if (runs_on == "none" && found != libraries.end()) runs_on = *found->second.begin();
      }
      if (in.had_partitioners && in.refusals->find(id) == in.refusals->end()) {
        reasons.insert(reasons.begin(),
                       "added by the compiler after partitioning (e.g. a dim order "
                       "conversion at a delegate boundary)");
      }
      if (!in.had_partitioners && reasons.empty()) {
        reasons.push_back(kNoPartitionerReason);
      }
      if (in.memory_views.count(id)) runs_on = "alias";
      if (ir::is_control_flow(node)) {
        // Jumps around its subgraphs, each compiled on its own (not described here).
        runs_on = "control flow";
        reasons = {"its subgraphs are compiled as models of their own"};
      }
      n["runs_on"] = runs_on;
      n["reasons"] = reasons;
    }
    nodes.push_back(std::move(n));
  }
  j["nodes"] = std::move(nodes);

  json regions = json::array();
  for (size_t r = 0; r < in.regions->regions.size(); ++r) {
    const Region& region = in.regions->regions[r];
    json nodes_of = json::array();
    for (ir::NodeId n : region.nodes) nodes_of.push_back(index.at(n));
    regions.push_back({{"backend", in.region_backend[r]},
                       {"backend_id", in.region_backend_id[r]},
                       {"nodes", nodes_of},
                       {"inputs", values_json(g, region.inputs)},
                       {"outputs", values_json(g, region.outputs)}});
    if (r < in.region_report.size() && !in.region_report[r].empty()) {
      regions.back()["report"] = json::parse(in.region_report[r], nullptr, false);
    }
  }
  j["regions"] = std::move(regions);

  json instructions = json::array();
  for (const InstructionOrigin& o : in.instructions) {
    if (!o.prim.empty()) {
      instructions.push_back({{"nodes", json::array()}, {"prim", o.prim}});
    } else if (o.delegate >= 0) {
      json nodes_of = json::array();
      for (ir::NodeId n : in.regions->regions[static_cast<size_t>(o.delegate)].nodes)
        nodes_of.push_back(index.at(n));
      instructions.push_back({{"nodes", nodes_of}, {"region", o.delegate}});
    } else {
      instructions.push_back({{"nodes", json::array({index.at(o.node)})}});
    }
  }
  j["instructions"] = std::move(instructions);
  return j.dump();
}

}  // namespace pteron::compiler
