#include <algorithm>
#include <unordered_set>

#include "compiler/passes/passes.h"

namespace pteron::compiler {

int remove_dead_code(ir::Graph& graph) {
  // A buffer's new value is an output too (the state the next call starts from).
  std::unordered_set<ir::ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  for (const ir::BufferMutation& m : graph.buffer_mutations()) outputs.insert(m.new_value);
  int removed = 0;
  // Walk backwards so a chain of dead nodes goes in one sweep.
  std::vector<ir::NodeId> order = graph.nodes();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& node = graph.node(*it);
    const bool used = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ir::ValueId v) {
      return v != ir::kNoValue && (outputs.count(v) || !graph.value(v).users.empty());
    });
    if (!used) {
      graph.remove_node(*it);
      ++removed;
    }
  }
  // Constants nobody reads any more (e.g. weights of removed nodes).
  std::vector<ir::ValueId> constants = graph.constants();
  for (ir::ValueId c : constants) {
    if (graph.value(c).users.empty() && !outputs.count(c)) graph.remove_constant(c);
  }
  return removed;
}

}  // namespace pteron::compiler
