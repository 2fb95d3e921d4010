#include "compiler/partition/library_coverage.h"

#include <map>
#include <unordered_set>

namespace pteron::compiler {

LeftByLibrary left_by_library(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                              const KernelLibrary& library, const PartitionContext& context) {
  ir::Graph copy = graph;  // constants are shared, not copied
  const std::unordered_set<ir::NodeId> none;
  for (const auto& [name, pass] : library.passes) pass(copy, none, context);
  std::vector<std::string> order;
  std::map<std::string, int> counts;
  double elements = 0;
  for (ir::NodeId id : nodes) {
    // A node the passes rewrote is gone from the copy (its replacement has a new id).
    if (!copy.has_node(id)) continue;
    const ir::Node& n = copy.node(id);
    if (n.schema != nullptr && n.schema->is_view) continue;
    const std::string op = n.op.str();
    if (op.rfind("quantized_decomposed::", 0) == 0 ||
        op.rfind(library.runtime_library + "::", 0) == 0)
      continue;
    if (counts[op]++ == 0) order.push_back(op);
    for (ir::ValueId v : n.inputs()) elements += static_cast<double>(copy.value(v).spec.numel());
    for (ir::ValueId v : n.outputs)
      if (v != ir::kNoValue) elements += static_cast<double>(copy.value(v).spec.numel());
  }
  LeftByLibrary left;
  left.elements = elements;
  for (const std::string& op : order) left.ops.push_back(op + " x" + std::to_string(counts[op]));
  return left;
}

}  // namespace pteron::compiler
