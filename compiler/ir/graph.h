// The compiler's program representation: a topologically ordered list of nodes over values.
//
// Building and using are separate, as in XNNPACK's subgraph API: the frontend (or a test)
// defines inputs, constants and nodes; passes then read the graph and edit it through the
// methods below, which keep producer/user links, names and the order consistent. Ids are
// stable: removing a node or value never renumbers the others.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/node.h"
#include "compiler/ir/value.h"

namespace pteron::compiler::ir {

// An output a new node defines.
struct NewValue {
  std::string name;
  TensorSpec spec;
};

// A buffer the program updates (e.g. a KV cache): after each run, `new_value` is the state
// value `buffer`'s content for the next run. `buffer` may also be a graph input the model
// writes into (`x.add_(1)`, torch.export's user input mutation): after each run the input's
// memory holds `new_value`, which the caller reads back, as ExecuTorch writes such inputs back.
struct BufferMutation {
  ValueId buffer = kNoValue;
  ValueId new_value = kNoValue;
};

class Graph {
 public:
  // ---- Building -------------------------------------------------------------------------
  ValueId add_input(std::string name, TensorSpec spec);
  ValueId add_constant(std::string name, TensorSpec spec, ConstantData data);
  // A mutable buffer (persistent state), `initial` its value at load.
  ValueId add_state(std::string name, TensorSpec spec, ConstantData initial);
  // Adds a call of `schema` with `args` (schema order, complete) defining one value per
  // entry of `outputs` (std::nullopt -> kNoValue), at the end or just before node `before`.
  NodeId add_node(const OpSchema& schema, std::vector<Argument> args,
                  std::vector<std::optional<NewValue>> outputs, DebugHandle debug = {},
                  NodeId before = kNoNode);
  void set_outputs(std::vector<ValueId> outputs);
  void add_buffer_mutation(BufferMutation mutation);
  // Turns constant buffer `value` into state (its bytes the initial value): a buffer another
  // method of the program mutates, which this one must read live.
  void make_state(ValueId value);
  // Points the mutation of state value `buffer` at another new value.
  void set_buffer_mutation(ValueId buffer, ValueId new_value);

  // ---- Reading --------------------------------------------------------------------------
  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  bool has_value(ValueId id) const;
  bool has_node(NodeId id) const;
  std::optional<ValueId> find_value(std::string_view name) const;

  const std::vector<NodeId>& nodes() const { return order_; }  // topological order
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // Whether `v` is one of the graph outputs (which keep their value, and memory of their own).
  bool is_output(ValueId v) const;
  const std::vector<ValueId>& constants() const { return constants_; }
  const std::vector<ValueId>& states() const { return states_; }
  const std::vector<BufferMutation>& buffer_mutations() const { return mutations_; }
  // Upper bound of ids handed out so far (for side tables indexed by id).
  size_t value_capacity() const { return values_.size(); }
  size_t node_capacity() const { return nodes_.size(); }

  // Bounded dynamic shapes: the export's symbols with their ranges and where each is read.
  SymbolTable& symbols() { return symbols_; }
  const SymbolTable& symbols() const { return symbols_; }
  // True when the node reads or writes a dynamic tensor or has a symbolic argument: passes
  // that rewrite shapes leave such nodes alone (their sizes are upper bounds, not exact).
  bool is_dynamic_node(NodeId node) const;

  // Subgraphs the control-flow nodes of this graph run (torch.cond's branches, a while_loop's
  // cond and body, a scan's function), by the index their arguments give (ir::subgraph_args).
  // Each is a graph of its own: its inputs are the node's operands (constant ones are constants
  // of the subgraph), its outputs the node's.
  size_t add_branch(Graph branch);
  Graph& branch(size_t index);
  const Graph& branch(size_t index) const;

  // Free-form facts about where the graph came from ("torch_version", "source", ...).
  std::map<std::string, std::string>& metadata() { return metadata_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // ---- Editing (passes) -----------------------------------------------------------------
  void set_arg(NodeId node, size_t index, Argument arg);
  // The argument of that schema name (Node::arg_index): set_arg(conv, "weight", ...).
  void set_arg(NodeId node, std::string_view name, Argument arg);
  void set_args(NodeId node, std::vector<Argument> args);
  // Switches a node to another op whose arguments `args` are (e.g. view -> view_copy).
  void set_op(NodeId node, const OpSchema& schema, std::vector<Argument> args);
  // Changes a value's spec; a constant's bytes must still fit (use set_constant otherwise).
  void set_spec(ValueId value, TensorSpec spec);
  // Replaces a constant's spec and bytes together (e.g. weights repacked to another layout).
  void set_constant(ValueId value, TensorSpec spec, ConstantData data);
  // Points every use of `from` (node arguments, graph outputs, buffer mutations; with no
  // `except`, the symbols read from it too) at `to`, except in node `except` (typically the
  // node that computes `to` from `from`).
  void replace_all_uses(ValueId from, ValueId to, NodeId except = kNoNode);
  // Removes a node whose outputs nobody uses, with its output values.
  void remove_node(NodeId node);
  // Removes an unused constant.
  void remove_constant(ValueId value);
  // Gives `value` the unused name `name` (a fused node's output takes the name of the value it
  // now computes, so tools that match values by name compare like with like).
  void rename_value(ValueId value, std::string name);
  // `base` if unused, else base_1, base_2, ...
  std::string unique_name(std::string_view base) const;

  // Checks every invariant (order, links, schemas, constant sizes); throws CompileError
  // describing the first violation. Passes call it in debug builds and tests.
  void verify() const;
  // Human-readable listing used in diagnostics, tests and `pteron inspect`.
  std::string to_string() const;

 private:
  ValueId new_value(std::string name, TensorSpec spec, ValueKind kind);
  Value& mutable_value(ValueId id);
  Node& mutable_node(NodeId id);
  void link_uses(const Node& node);
  void unlink_uses(const Node& node);

  std::vector<Value> values_;  // by id; removed entries have id == kNoValue
  std::vector<Node> nodes_;    // by id; removed entries have id == kNoNode
  std::vector<NodeId> order_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<ValueId> constants_;
  std::vector<ValueId> states_;
  std::vector<BufferMutation> mutations_;
  std::unordered_map<std::string, ValueId> names_;
  std::map<std::string, std::string> metadata_;
  SymbolTable symbols_;
  std::vector<Graph> branches_;  // a vector's element may be incomplete here (C++17)
};

}  // namespace pteron::compiler::ir
