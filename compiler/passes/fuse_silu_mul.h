// SiLU / SwiGLU fusion for the "optimized" kernel library: the decomposed SiLU
// mul(x, sigmoid(x)), and the gated product mul(mul(x, sigmoid(x)), u) of Llama-style MLPs
// (down(silu(gate(h)) * up(h))), become one pteron::silu_mul(x, u?) whose kernel
// (kernels/optimized/op_silu.cpp) makes one pass over x and u instead of three passes and two
// intermediates. Like fuse_linear_relu, it runs only when that library is selected.
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::silu_mul(Tensor x, Tensor? other) -> Tensor and its out variant.
const ir::OpSchema& silu_mul_schema();

// Rewrites float32 mul(x, sigmoid(x)) (either operand order) whose sigmoid is read only by
// that mul, and then, where the product is read only by a mul with a tensor of the same shape
// and dim order (no broadcasting), that mul too. Contiguous tensors only, nothing delegated.
// Returns how many SiLUs it fused.
int fuse_silu_mul(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
