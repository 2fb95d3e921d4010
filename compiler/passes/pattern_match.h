// What the passes that match chains of nodes (fusions, row selections, weight rewrites) ask of
// a value, a node or an argument, written once.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_names.h"

namespace pteron::compiler {

// No node reads `v` and it is not a graph output (kNoValue, an absent optional output, too).
bool is_unused(const ir::Graph& graph, ir::ValueId v);

// `v` is computed by a node, read only once, and not a graph output.
bool single_use_intermediate(const ir::Graph& graph, const ir::Value& v);

// The node computing `v` when a chain may absorb it: `v` is an intermediate, not a graph output,
// and read by exactly one node besides those in `also_read_by` (nodes the chain absorbs too).
const ir::Node* private_producer(const ir::Graph& graph, ir::ValueId v,
                                 const std::vector<ir::NodeId>& also_read_by = {});

// `n` is not null and calls `op` (ops::aten::bmm).
bool is_op(const ir::Node* n, ir::OpName op);

// aten::mul.Tensor of two tensors.
bool is_tensor_mul(const ir::Node& n);

// When `v`'s only reader is a non-delegated tensor mul of `v` by another tensor (and `v` is not
// a graph output): that mul and the other factor (a gate, a norm's weight).
struct SoleProduct {
  ir::NodeId mul = ir::kNoNode;
  ir::ValueId other = ir::kNoValue;
};
std::optional<SoleProduct> sole_product(const ir::Graph& graph,
                                        const std::unordered_set<ir::NodeId>& delegated,
                                        ir::ValueId v);

// A number argument's value (int, float or Scalar), or a one-element float32, float64 or int64
// constant's (a Python number the frontend wrapped).
std::optional<double> constant_scalar(const ir::Graph& graph, const ir::Argument& a);

// select.int(x, dim, index) keeping one row of x's rows (all dims but the last flattened):
// dim is a leading dim, every other leading dim has size 1, index is in range.
struct RowSelection {
  int64_t dim = 0;    // non-negative
  int64_t index = 0;  // non-negative
  int64_t rows = 0;   // x's size along dim
};
std::optional<RowSelection> one_row_selection(const ir::Graph& graph, const ir::Node& select);

}  // namespace pteron::compiler
