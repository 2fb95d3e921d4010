// ReLU fusion for the "optimized" kernel library: linear followed by relu becomes one
// pteron::linear_relu, whose kernel (kernels/optimized/op_linear.cpp) applies the ReLU to each
// output tile as the SGEMM finishes it, instead of a second pass over the whole activation
// (OPT's FFN: 12 x [128, 3072] written, read and written again). pteron::linear_relu has no
// ExecuTorch kernel, so, like fuse_attention, the pass belongs to the optimized library
// (compiler/partition/registry.cpp) and runs only when that library is selected.
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::linear_relu(Tensor input, Tensor weight, Tensor? bias) -> Tensor and its out-variant
// pteron::linear_relu.out(..., *, Tensor(a!) out), added to the global registry on first use.
const ir::OpSchema& linear_relu_schema();

// Rewrites relu(linear(x, W, b)) into linear_relu(x, W, b) when both are float32, the linear's
// result is read only by the relu (and is not a graph output) and neither node is delegated;
// returns how many it fused.
int fuse_linear_relu(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
