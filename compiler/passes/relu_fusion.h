// The shape both ReLU fusions of the optimized library (fuse_linear_relu, fuse_conv_relu) look
// for and the rewrite they make: relu(x) where x's producer can apply the ReLU itself.
#pragma once

#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {

// When node `id` is a float32 aten::relu outside `delegated` whose input is a single-use
// intermediate made by a node outside `delegated`: that input. Null otherwise.
const ir::Value* relu_fusion_input(const ir::Graph& graph,
                                   const std::unordered_set<ir::NodeId>& delegated, ir::NodeId id);

// A float32 clamp of node `id` that a producer may apply to its output: aten::relu (0, +inf),
// aten::hardtanh (min_val, max_val; relu6 decomposes to it) or aten::clamp with Scalar bounds
// (a None bound is infinite), outside `delegated`, whose input is a single-use intermediate made
// by a node outside `delegated`. input is null when node `id` is none of these.
struct ClampFusion {
  const ir::Value* input = nullptr;
  double lo = 0.0, hi = 0.0;
};
ClampFusion clamp_fusion_input(const ir::Graph& graph,
                               const std::unordered_set<ir::NodeId>& delegated, ir::NodeId id);

// Node `producer` becomes the fused call `schema(args)` (keeping its debug handle, so the
// profiler charges the fused op to the producer's module), takes over the users and the name
// of relu's output, and the relu is removed.
void absorb_relu(ir::Graph& graph, ir::NodeId relu, ir::NodeId producer, const ir::OpSchema& schema,
                 std::vector<ir::Argument> args);

}  // namespace pteron::compiler
