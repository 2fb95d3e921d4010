#include "compiler/ir/node.h"

#include <algorithm>

#include "compiler/compile_error.h"

namespace pteron::compiler::ir {

std::string DebugHandle::location() const {
  if (module_path.empty()) return source;
  if (source.empty()) return module_path;
  return module_path + " @ " + source;
}

const Argument& Node::arg(std::string_view name) const {
  const int index = schema ? schema->arg_index(name) : -1;
  if (index < 0 || static_cast<size_t>(index) >= args.size()) {
    throw CompileError(describe() + ": no argument '" + std::string(name) + "'");
  }
  return args[index];
}

std::vector<ValueId> Node::inputs() const {
  std::vector<ValueId> ids;
  for (const Argument& a : args) {
    a.for_each_value([&](ValueId id) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    });
  }
  return ids;
}

std::string Node::describe() const {
  std::string s = "node '" + debug.node_name + "' (" + op.str();
  const std::string where = debug.location();
  if (!where.empty()) s += ", " + where;
  return s + ")";
}

}  // namespace pteron::compiler::ir
