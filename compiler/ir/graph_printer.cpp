// Graph::to_string: the text form of a graph, one line per node, used in messages and tests.
#include <string>

#include "compiler/ir/graph.h"

namespace pteron::compiler::ir {
namespace {

std::string_view constant_kind_name(ConstantKind kind) {
  switch (kind) {
    case ConstantKind::Parameter:
      return "parameter";
    case ConstantKind::Buffer:
      return "buffer";
    case ConstantKind::TensorConstant:
      return "tensor_constant";
    case ConstantKind::Folded:
      return "folded";
  }
  return "?";
}

}  // namespace

std::string Graph::to_string() const {
  auto ref = [&](ValueId id) { return "%" + value(id).name; };
  auto decl = [&](ValueId id) { return ref(id) + ": " + ir::to_string(value(id).spec); };
  std::string s = "graph(";
  for (size_t i = 0; i < inputs_.size(); ++i) s += (i ? ", " : "") + decl(inputs_[i]);
  s += ") {\n";
  for (ValueId id : constants_) {
    const ConstantData& c = *value(id).constant;
    s += "  " + decl(id) + " = " + std::string(constant_kind_name(c.kind));
    if (!c.fqn.empty()) s += " \"" + c.fqn + "\"";
    if (c.kind == ConstantKind::Buffer && !c.persistent) s += " non-persistent";
    s += " (" + std::to_string(c.bytes.size()) + " bytes)\n";
  }
  for (ValueId id : states_) {
    const ConstantData& c = *value(id).initial;
    s += "  " + decl(id) + " = state \"" + c.fqn + "\" (" + std::to_string(c.bytes.size()) +
         " bytes initially)\n";
  }
  for (NodeId id : order_) {
    const Node& n = node(id);
    s += "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (i) s += ", ";
      s += n.outputs[i] == kNoValue ? "_" : decl(n.outputs[i]);
    }
    s += (n.outputs.empty() ? "" : " = ") + n.op.str() + "(";
    for (size_t i = 0; i < n.args.size(); ++i) {
      if (i) s += ", ";
      if (n.schema && i < n.schema->args.size()) s += n.schema->args[i].name + "=";
      s += ir::to_string(n.args[i], ref);
    }
    s += ")";
    const std::string where = n.debug.location();
    if (!where.empty()) s += "  # " + where;
    s += "\n";
  }
  s += "  return (";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + ref(outputs_[i]);
  s += ")\n";
  for (const BufferMutation& m : mutations_) {
    s += "  mutates " + ref(m.buffer) + " <- " + ref(m.new_value) + "\n";
  }
  return s + "}\n";
}

}  // namespace pteron::compiler::ir
