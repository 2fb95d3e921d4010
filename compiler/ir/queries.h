// Small questions every stage asks of the IR: how many elements a shape has, how to print one
// in a message, which op a node calls. One definition each (the lowerings and passes had their
// own copies).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "compiler/ir/node.h"

namespace pteron::compiler::ir {

// The number of elements of a tensor of `sizes` (1 for a scalar's empty list).
int64_t numel(std::span<const int64_t> sizes);

// "[2, 4]": sizes as messages and refusal reasons print them.
std::string shape_str(std::span<const int64_t> sizes);

// True when `n` calls `op` ("aten::add.Tensor": namespace, name and overload).
bool is_op(const Node& n, std::string_view op);

// True when `op` is any overload of one of `ops`' operators (their namespace and name:
// ops::aten::view stands for every aten::view overload), for rules that hold whatever the
// overload (the quantizer's op roles, the no-op and reshape rules).
bool any_overload_of(const OpRef& op, std::initializer_list<OpName> ops);
inline bool any_overload_of(const Node& n, std::initializer_list<OpName> ops) {
  return any_overload_of(n.op, ops);
}

// True when `n` runs for its effect, not for outputs: a run-time check (pteron::check_size),
// which dead-code removal keeps. Export's own assertions (_assert_tensor_metadata, ...) are
// not: they describe what the compiler already knows.
bool runs_for_effect(const Node& n);

// The arguments of a control-flow node (pteron::cond, while_loop, scan) naming its subgraphs
// (Graph::branch); empty for any other node.
std::vector<size_t> subgraph_args(const Node& n);
bool is_control_flow(const Node& n);

// Whether symbolic argument `arg` (an index into `schema.args`) needs an upper bound: an int
// that may be a size memory is planned at. Not so for values (Scalar and Tensor positions:
// `x + n.item()`), a run-time check's operands (pteron::check_size), slice's start and end
// (the kernel clamps them to the dim: `x[:n.item()]`, whose length is its own data-dependent
// size, bounded by the dim) and select's index (the kernel checks it: `x[n.item()]`).
bool sym_arg_needs_bound(const OpSchema& schema, size_t arg);

}  // namespace pteron::compiler::ir
