// Winograd lowering for the "optimized" kernel library's 3x3 stride-1 convolutions: their
// weights are transformed once, here, into U[36][Cin][Cout] (G g G^T of F(4x4, 3x3)) and the
// node becomes pteron::conv2d_winograd, whose kernel (kernels/optimized/op_conv2d_winograd.cpp,
// util/winograd.h) skips the per-call weight transform. Runs after fuse_conv_relu (so fused
// convolutions are taken too) and only when the optimized library is selected:
// pteron::conv2d_winograd has no ExecuTorch kernel.
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::conv2d_winograd(Tensor input, Tensor weight_winograd, Tensor? bias, Tensor? residual,
// int[] padding, bool relu) -> Tensor: relu?(conv + bias + residual), weight_winograd
// [36, Cin, Cout], residual of the output's shape; and its .out variant.
const ir::OpSchema& conv2d_winograd_schema();

// Rewrites each undelegated float32 convolution (aten::convolution, pteron::convolution_relu
// or pteron::convolution_add_relu) that is 2-D, 3x3, stride 1, dilation 1, ungrouped, not
// transposed, with constant contiguous weights, an output of at least 8x8 and weights large enough
// that transforming them per call costs more than it should (see winograd_conv.cpp); returns how
// many it rewrote.
int winograd_conv(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
