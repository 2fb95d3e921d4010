#include "compiler/ir/graph.h"

#include <algorithm>

#include "compiler/compile_error.h"

namespace pteron::compiler::ir {

ConstantData ConstantData::owned(std::vector<uint8_t> data, std::string fqn) {
  auto storage = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  ConstantData c;
  c.fqn = std::move(fqn);
  c.bytes = std::span<const uint8_t>(storage->data(), storage->size());
  c.owner = std::move(storage);
  return c;
}

// ---- Building ---------------------------------------------------------------------------

ValueId Graph::new_value(std::string name, TensorSpec spec, ValueKind kind) {
  if (name.empty()) name = unique_name("v");
  if (names_.contains(name)) throw CompileError("value name '" + name + "' is already used");
  if (spec.dim_order.size() != spec.sizes.size()) {
    throw CompileError("value '" + name + "': dim_order has " +
                       std::to_string(spec.dim_order.size()) + " entries for rank " +
                       std::to_string(spec.sizes.size()));
  }
  const auto id = static_cast<ValueId>(values_.size());
  Value& v = values_.emplace_back();
  v.id = id;
  v.name = std::move(name);
  v.spec = std::move(spec);
  v.kind = kind;
  names_.emplace(v.name, id);
  return id;
}

ValueId Graph::add_input(std::string name, TensorSpec spec) {
  const ValueId id = new_value(std::move(name), std::move(spec), ValueKind::Input);
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, TensorSpec spec, ConstantData data) {
  if (data.bytes.size() != spec.nbytes()) {
    throw CompileError("constant '" + name + "' has " + std::to_string(data.bytes.size()) +
                       " bytes, its spec " + ir::to_string(spec) + " needs " +
                       std::to_string(spec.nbytes()));
  }
  const ValueId id = new_value(std::move(name), std::move(spec), ValueKind::Constant);
  values_[id].constant = std::move(data);
  constants_.push_back(id);
  return id;
}

ValueId Graph::add_state(std::string name, TensorSpec spec, ConstantData initial) {
  if (initial.bytes.size() != spec.nbytes()) {
    throw CompileError("buffer '" + name + "' has " + std::to_string(initial.bytes.size()) +
                       " bytes, its spec " + ir::to_string(spec) + " needs " +
                       std::to_string(spec.nbytes()));
  }
  const ValueId id = new_value(std::move(name), std::move(spec), ValueKind::State);
  values_[id].initial = std::move(initial);
  states_.push_back(id);
  return id;
}

NodeId Graph::add_node(const OpSchema& schema, std::vector<Argument> args,
                       std::vector<std::optional<NewValue>> outputs, DebugHandle debug,
                       NodeId before) {
  const auto id = static_cast<NodeId>(nodes_.size());
  Node node;
  node.id = id;
  node.op = schema.op;
  node.schema = &schema;
  node.args = std::move(args);
  node.debug = std::move(debug);
  if (node.debug.node_name.empty()) {
    node.debug.node_name = outputs.empty() || !outputs[0] ? schema.op.name : outputs[0]->name;
  }
  if (node.args.size() != schema.args.size()) {
    throw CompileError(node.describe() + ": " + std::to_string(node.args.size()) +
                       " arguments given, the schema has " + std::to_string(schema.args.size()));
  }
  node.args.shrink_to_fit();
  for (const Argument& a : node.args) {
    a.for_each_value([&](ValueId v) {
      if (!has_value(v)) {
        throw CompileError(node.describe() + ": argument refers to unknown value " +
                           std::to_string(v));
      }
    });
  }
  // Check names before creating anything, so a failure leaves the graph unchanged.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i] || outputs[i]->name.empty()) continue;  // named on creation
    const std::string& name = outputs[i]->name;
    bool repeated = false;
    for (size_t j = 0; j < i; ++j) repeated |= outputs[j] && outputs[j]->name == name;
    if (names_.contains(name) || repeated) {
      throw CompileError(node.describe() + ": output name '" + name + "' is already used");
    }
    if (outputs[i]->spec.dim_order.size() != outputs[i]->spec.sizes.size()) {
      throw CompileError(node.describe() + ": output '" + name +
                         "' has a dim_order of the wrong rank");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i]) {
      node.outputs.push_back(kNoValue);
      continue;
    }
    std::string name = std::move(outputs[i]->name);
    if (name.empty()) name = unique_name(schema.op.name);
    const ValueId v =
        new_value(std::move(name), std::move(outputs[i]->spec), ValueKind::Intermediate);
    values_[v].producer = id;
    values_[v].producer_output = static_cast<uint32_t>(i);
    node.outputs.push_back(v);
  }
  Node& stored = nodes_.emplace_back(std::move(node));
  link_uses(stored);
  if (before == kNoNode) {
    order_.push_back(id);
  } else {
    auto it = std::find(order_.begin(), order_.end(), before);
    if (it == order_.end()) throw CompileError("add_node: no node " + std::to_string(before));
    order_.insert(it, id);
  }
  return id;
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  for (ValueId v : outputs) value(v);  // validates
  outputs_ = std::move(outputs);
}

void Graph::add_buffer_mutation(BufferMutation mutation) {
  if (!value(mutation.buffer).is_state() && !value(mutation.buffer).is_input()) {
    throw CompileError("buffer mutation target '" + value(mutation.buffer).name +
                       "' is neither a state value nor an input");
  }
  value(mutation.new_value);
  for (const BufferMutation& m : mutations_) {
    if (m.buffer == mutation.buffer)
      throw CompileError("buffer '" + value(m.buffer).name + "' is mutated twice");
  }
  mutations_.push_back(mutation);
}

void Graph::make_state(ValueId id) {
  Value& v = mutable_value(id);
  if (!v.is_constant() || v.constant->kind != ConstantKind::Buffer)
    throw CompileError("value '" + v.name + "' is not a constant buffer");
  v.kind = ValueKind::State;
  v.initial = std::move(v.constant);
  v.constant.reset();
  std::erase(constants_, id);
  states_.push_back(id);
}

void Graph::set_buffer_mutation(ValueId buffer, ValueId new_value) {
  value(new_value);
  for (BufferMutation& m : mutations_) {
    if (m.buffer == buffer) {
      m.new_value = new_value;
      return;
    }
  }
  throw CompileError("value '" + value(buffer).name + "' is not a mutated buffer");
}

// ---- Reading ----------------------------------------------------------------------------

bool Graph::is_output(ValueId v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

bool Graph::has_value(ValueId id) const { return id < values_.size() && values_[id].id == id; }
bool Graph::has_node(NodeId id) const { return id < nodes_.size() && nodes_[id].id == id; }

const Value& Graph::value(ValueId id) const {
  if (!has_value(id)) throw CompileError("no value with id " + std::to_string(id));
  return values_[id];
}

const Node& Graph::node(NodeId id) const {
  if (!has_node(id)) throw CompileError("no node with id " + std::to_string(id));
  return nodes_[id];
}

Value& Graph::mutable_value(ValueId id) { return const_cast<Value&>(value(id)); }
Node& Graph::mutable_node(NodeId id) { return const_cast<Node&>(node(id)); }

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  auto it = names_.find(std::string(name));
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

// ---- Editing ----------------------------------------------------------------------------

void Graph::link_uses(const Node& node) {
  for (ValueId v : node.inputs()) {
    auto& users = values_[v].users;
    if (std::find(users.begin(), users.end(), node.id) == users.end()) users.push_back(node.id);
  }
}

void Graph::unlink_uses(const Node& node) {
  for (ValueId v : node.inputs()) std::erase(values_[v].users, node.id);
}

void Graph::set_arg(NodeId id, size_t index, Argument arg) {
  Node& n = mutable_node(id);
  if (index >= n.args.size()) {
    throw CompileError(n.describe() + ": no argument at index " + std::to_string(index));
  }
  arg.for_each_value([&](ValueId v) { value(v); });
  unlink_uses(n);
  n.args[index] = std::move(arg);
  link_uses(n);
}

void Graph::set_arg(NodeId id, std::string_view name, Argument arg) {
  set_arg(id, node(id).arg_index(name), std::move(arg));
}

void Graph::set_args(NodeId id, std::vector<Argument> args) {
  set_op(id, *node(id).schema, std::move(args));
}

void Graph::set_op(NodeId id, const OpSchema& schema, std::vector<Argument> args) {
  Node& n = mutable_node(id);
  if (args.size() != schema.args.size()) {
    throw CompileError(n.describe() + ": " + std::to_string(args.size()) + " arguments given for " +
                       schema.op.str() + ", which takes " + std::to_string(schema.args.size()));
  }
  for (const Argument& a : args) a.for_each_value([&](ValueId v) { value(v); });
  unlink_uses(n);
  n.op = schema.op;
  n.schema = &schema;
  n.args = std::move(args);
  link_uses(n);
}

void Graph::set_spec(ValueId id, TensorSpec spec) {
  Value& v = mutable_value(id);
  if (spec.dim_order.size() != spec.sizes.size()) {
    throw CompileError("value '" + v.name + "': dim_order does not match the rank");
  }
  if (v.constant && v.constant->bytes.size() != spec.nbytes()) {
    throw CompileError("constant '" + v.name + "': new spec " + ir::to_string(spec) +
                       " does not match its " + std::to_string(v.constant->bytes.size()) +
                       " bytes");
  }
  v.spec = std::move(spec);
}

void Graph::set_constant(ValueId id, TensorSpec spec, ConstantData data) {
  Value& v = mutable_value(id);
  if (!v.is_constant()) throw CompileError("value '" + v.name + "' is not a constant");
  if (spec.dim_order.size() != spec.sizes.size() || data.bytes.size() != spec.nbytes()) {
    throw CompileError("constant '" + v.name + "': " + std::to_string(data.bytes.size()) +
                       " bytes do not match spec " + ir::to_string(spec));
  }
  v.spec = std::move(spec);
  v.constant = std::move(data);
}

void Graph::replace_all_uses(ValueId from, ValueId to, NodeId except) {
  value(to);
  const std::vector<NodeId> users = value(from).users;
  for (NodeId user : users) {
    if (user == except) continue;
    Node& n = mutable_node(user);
    unlink_uses(n);
    for (Argument& a : n.args) a.replace_value(from, to);
    link_uses(n);
  }
  for (ValueId& v : outputs_) {
    if (v == from) v = to;
  }
  for (BufferMutation& m : mutations_) {
    if (m.new_value == from) m.new_value = to;
  }
  // A symbol read from `from` (its size at a dim, or its value: item()) is read from its
  // replacement (a folded constant, ...) once no use of `from` is left.
  if (except == kNoNode) {
    for (auto& [name, info] : symbols_) {
      if (info.input == from) info.input = to;
    }
  }
}

void Graph::remove_node(NodeId id) {
  const Node& n = node(id);
  for (ValueId out : n.outputs) {
    if (out == kNoValue) continue;
    const Value& v = values_[out];
    const bool is_output = std::find(outputs_.begin(), outputs_.end(), out) != outputs_.end();
    const bool mutated = std::any_of(mutations_.begin(), mutations_.end(),
                                     [&](const BufferMutation& m) { return m.new_value == out; });
    if (!v.users.empty() || is_output || mutated) {
      throw CompileError(n.describe() + ": cannot remove, its output '" + v.name +
                         "' is still used");
    }
  }
  unlink_uses(n);
  for (ValueId out : n.outputs) {
    if (out == kNoValue) continue;
    names_.erase(values_[out].name);
    values_[out].id = kNoValue;
  }
  std::erase(order_, id);
  nodes_[id].id = kNoNode;
}

void Graph::remove_constant(ValueId id) {
  const Value& v = value(id);
  const bool mutated = std::any_of(mutations_.begin(), mutations_.end(),
                                   [&](const BufferMutation& m) { return m.buffer == id; });
  if (!v.is_constant() || !v.users.empty() || mutated ||
      std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end()) {
    throw CompileError("cannot remove value '" + v.name + "': not an unused constant");
  }
  names_.erase(v.name);
  std::erase(constants_, id);
  values_[id].id = kNoValue;
}

void Graph::rename_value(ValueId id, std::string name) {
  Value& v = mutable_value(id);
  if (v.name == name) return;
  if (names_.contains(name)) throw CompileError("value name '" + name + "' is already used");
  names_.erase(v.name);
  names_.emplace(name, id);
  v.name = std::move(name);
}

std::string Graph::unique_name(std::string_view base) const {
  std::string name(base);
  for (int i = 1; names_.contains(name); ++i) name = std::string(base) + "_" + std::to_string(i);
  return name;
}

// ---- Verification -----------------------------------------------------------------------

size_t Graph::add_branch(Graph branch) {
  branches_.push_back(std::move(branch));
  return branches_.size() - 1;
}

Graph& Graph::branch(size_t index) {
  if (index >= branches_.size())
    throw CompileError("no branch subgraph " + std::to_string(index) + " in this graph");
  return branches_[index];
}

const Graph& Graph::branch(size_t index) const { return const_cast<Graph*>(this)->branch(index); }

void Graph::verify() const {
  auto fail = [](const std::string& what) { throw CompileError("graph invariant: " + what); };
  std::vector<bool> defined(values_.size(), false);
  for (ValueId v : inputs_) {
    if (!has_value(v) || !values_[v].is_input()) fail("input " + std::to_string(v) + " invalid");
    defined[v] = true;
  }
  for (ValueId v : constants_) {
    if (!has_value(v) || !values_[v].is_constant() || !values_[v].constant) {
      fail("constant " + std::to_string(v) + " invalid");
    }
    if (values_[v].constant->bytes.size() != values_[v].spec.nbytes()) {
      fail("constant '" + values_[v].name + "' size does not match its spec");
    }
    defined[v] = true;
  }
  for (ValueId v : states_) {
    if (!has_value(v) || !values_[v].is_state() || !values_[v].initial ||
        values_[v].initial->bytes.size() != values_[v].spec.nbytes()) {
      fail("state " + std::to_string(v) + " invalid");
    }
    defined[v] = true;
  }
  std::vector<std::vector<NodeId>> expected_users(values_.size());
  for (NodeId id : order_) {
    if (!has_node(id)) fail("order lists removed node " + std::to_string(id));
    const Node& n = nodes_[id];
    if (!n.schema || n.args.size() != n.schema->args.size()) {
      fail(n.describe() + " has no schema or the wrong number of arguments");
    }
    for (ValueId v : n.inputs()) {
      if (!has_value(v)) fail(n.describe() + " reads removed value " + std::to_string(v));
      if (!defined[v]) fail(n.describe() + " reads '" + values_[v].name + "' before it is defined");
      expected_users[v].push_back(id);
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ValueId v = n.outputs[i];
      if (v == kNoValue) continue;
      if (!has_value(v) || values_[v].producer != id || values_[v].producer_output != i) {
        fail(n.describe() + " output " + std::to_string(i) + " is not linked back to it");
      }
      defined[v] = true;
    }
  }
  for (const Value& v : values_) {
    if (v.id == kNoValue) continue;
    std::vector<NodeId> actual = v.users, expected = expected_users[v.id];
    std::sort(actual.begin(), actual.end());
    std::sort(expected.begin(), expected.end());
    if (actual != expected) fail("users of '" + v.name + "' are out of date");
    if (v.is_intermediate() && !defined[v.id]) fail("'" + v.name + "' has no producer");
    std::vector<uint8_t> order = v.spec.dim_order;
    std::sort(order.begin(), order.end());
    if (order != identity_dim_order(v.spec.rank())) {
      fail("'" + v.name + "' has an invalid dim_order");
    }
  }
  for (ValueId v : outputs_) {
    if (!has_value(v)) fail("graph output " + std::to_string(v) + " was removed");
  }
  for (const BufferMutation& m : mutations_) {
    if (!has_value(m.buffer) || !(values_[m.buffer].is_state() || values_[m.buffer].is_input()))
      fail("mutation of a value that is neither state nor an input");
    if (!has_value(m.new_value))
      fail("mutation of '" + values_[m.buffer].name + "' reads a removed value");
    if (values_[m.new_value].spec.dtype != values_[m.buffer].spec.dtype ||
        values_[m.new_value].spec.sizes != values_[m.buffer].spec.sizes) {
      fail("mutation of '" + values_[m.buffer].name + "' changes its dtype or shape");
    }
  }
}

}  // namespace pteron::compiler::ir

namespace pteron::compiler::ir {

bool Graph::is_dynamic_node(NodeId id) const {
  const Node& n = node(id);
  for (const Argument& a : n.args) {
    if (a.is_symbolic()) return true;
  }
  for (ValueId v : n.inputs()) {
    if (value(v).spec.is_dynamic()) return true;
  }
  for (ValueId v : n.outputs) {
    if (v != kNoValue && value(v).spec.is_dynamic()) return true;
  }
  return false;
}

}  // namespace pteron::compiler::ir
