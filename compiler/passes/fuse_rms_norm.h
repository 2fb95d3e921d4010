// RMSNorm fusion for the "optimized" kernel library: the chain torch exports for Llama-style
// RMSNorm (transformers' LlamaRMSNorm, torch.nn.RMSNorm after decomposition),
//   w * (x * rsqrt(mean(pow(x, 2), [-1], keepdim=True) + eps))
// becomes one pteron::rms_norm(x, w?, eps) (kernels/optimized/op_rms_norm.cpp): one pass per
// row instead of six kernels and three full-size intermediates. Runs only when that library
// is selected, like the other fusions into pteron:: ops.
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::rms_norm(Tensor x, Tensor? weight, float eps) -> Tensor and its out variant.
const ir::OpSchema& rms_norm_schema();

// Rewrites x * rsqrt(mean(x^2, [-1], keepdim) + eps) (operands of either mul in either order,
// eps a Scalar or a one-element float32 constant) into rms_norm(x, None, eps), and a following
// mul by a 1-d [D] tensor into rms_norm(x, w, eps). float32, contiguous, every intermediate
// read only by the chain, nothing delegated. Returns how many it fused.
int fuse_rms_norm(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
