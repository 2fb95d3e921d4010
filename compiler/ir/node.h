// Nodes: one operator call each, arguments in schema order with defaults filled.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/argument.h"
#include "compiler/ir/ids.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler::ir {

// Where a node came from, so diagnostics and runtime profiles point at the user's model.
// Passes that replace a node give the new nodes the old node's handle.
struct DebugHandle {
  int id = -1;              // index of the node in the exported graph; -1 for compiler-made
  std::string node_name;    // export's node name ("addmm_1")
  std::string module_path;  // nn_module_stack's innermost module ("layers.0.attn"); "" = root
  std::string source;       // "file:line" of the innermost frame outside torch itself

  // "layers.0.attn @ model.py:42", or whichever parts are known.
  std::string location() const;
};

struct Node {
  NodeId id = kNoNode;
  OpRef op;
  const OpSchema* schema = nullptr;  // never null for nodes the frontend made
  std::vector<Argument> args;        // schema order, every argument present
  // One value per returned tensor, in return order; a Tensor[] return is flattened into
  // consecutive entries. kNoValue marks an optional output torch did not produce.
  std::vector<ValueId> outputs;
  DebugHandle debug;

  // The argument named `name` (schema name); throws CompileError naming the node if absent.
  const Argument& arg(std::string_view name) const;
  // Tensor values read by this node, in argument order, each once.
  std::vector<ValueId> inputs() const;
  // "node 'addmm_1' (aten::addmm.default, fc1 @ model.py:12)", for messages.
  std::string describe() const;
};

}  // namespace pteron::compiler::ir
