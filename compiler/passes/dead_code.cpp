#include <algorithm>
#include <string>
#include <unordered_set>
#include <variant>

#include "compiler/ir/queries.h"
#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

void symbols_of(const ir::SymExpr& e, std::unordered_set<std::string>& out) {
  if (e.op == ir::SymExpr::Op::Symbol) out.insert(e.symbol);
  for (const ir::SymExprPtr& o : e.operands) symbols_of(*o, out);
}

// The intermediate values a symbolic argument reads its size from (nonzero's output when only
// its length is used, as in zeros(nonzero(x).shape[0])): live, though no node reads them.
std::unordered_set<ir::ValueId> size_sources(const ir::Graph& graph) {
  std::unordered_set<std::string> used;
  for (ir::NodeId n : graph.nodes()) {
    for (const ir::Argument& a : graph.node(n).args) {
      if (const auto* s = std::get_if<ir::SymInt>(&a.variant())) symbols_of(*s->expr, used);
      if (const auto* l = std::get_if<ir::SymIntList>(&a.variant())) {
        for (const ir::SymIntItem& item : l->items) {
          if (item.expr) symbols_of(*item.expr, used);
        }
      }
    }
  }
  std::unordered_set<ir::ValueId> out;
  for (const std::string& name : used) {
    auto it = graph.symbols().find(name);
    if (it != graph.symbols().end() && it->second.input != ir::kNoValue)
      out.insert(it->second.input);
  }
  return out;
}

}  // namespace

int remove_dead_code(ir::Graph& graph) {
  // A buffer's new value is an output too (the state the next call starts from).
  std::unordered_set<ir::ValueId> outputs(graph.outputs().begin(), graph.outputs().end());
  for (const ir::BufferMutation& m : graph.buffer_mutations()) outputs.insert(m.new_value);
  for (ir::ValueId v : size_sources(graph)) outputs.insert(v);
  int removed = 0;
  // Walk backwards so a chain of dead nodes goes in one sweep.
  std::vector<ir::NodeId> order = graph.nodes();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& node = graph.node(*it);
    if (ir::runs_for_effect(node)) continue;  // a run-time check: never dead
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
