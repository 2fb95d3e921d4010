// ReLU fusion for the "optimized" kernel library's convolution: convolution followed by relu
// becomes one pteron::convolution_relu, whose kernel (kernels/optimized/op_convolution.cpp)
// applies the ReLU to each SGEMM output tile while it is in cache instead of a second pass over
// the activation (resnet-18: 9 of them, 3 MiB each at 224x224). Like fuse_linear_relu, it
// belongs to the optimized library (compiler/partition/registry.cpp) and runs only when that
// library is selected: pteron::convolution_relu has no ExecuTorch kernel.
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::convolution_relu(<aten::convolution's nine arguments>) -> Tensor and its out-variant
// pteron::convolution_relu.out(..., *, Tensor(a!) out), added to the global registry on first
// use.
const ir::OpSchema& convolution_relu_schema();

// pteron::convolution_clamp(<the nine>, Scalar min, Scalar max) -> Tensor: clamp(convolution,
// min, max), a ReLU6 / hardtanh / clamp after a convolution.
const ir::OpSchema& convolution_clamp_schema();

// pteron::convolution_add_relu(<the nine>, Tensor other) -> Tensor: relu(convolution + other),
// resnet's residual block ending; `other` has the result's shape (no broadcasting).
const ir::OpSchema& convolution_add_relu_schema();

// pteron::convolution_silu(<the nine>) -> Tensor: silu(convolution) (pteron::silu_mul(conv, None),
// which fuse_silu_mul makes of x * sigmoid(x) and aten::silu), EfficientNet's and YOLO's.
const ir::OpSchema& convolution_silu_schema();

// pteron::convolution_hardswish(<the nine>) -> Tensor: hardswish(convolution), MobileNetV3's.
const ir::OpSchema& convolution_hardswish_schema();

// pteron::convolution_scaled(<the nine>, Tensor scale) -> Tensor: convolution(input * scale)
// for scale [1 or N, Cin, 1, 1] (a squeeze-excite gate before a projection), groups 1.
const ir::OpSchema& convolution_scaled_schema();

// Rewrites relu(convolution(...)) into convolution_relu(...), hardtanh / clamp(convolution(...))
// into convolution_clamp(..., min, max), silu_mul(convolution(...), None) into
// convolution_silu(...), hardswish(convolution(...)) into convolution_hardswish(...),
// convolution(mul(x, s)) with s [1 or N, C, 1, 1] into
// convolution_scaled(x, ..., s) (ungrouped convolutions only), and relu(add(convolution(...),
// other)) (alpha 1, either order, other of the same shape) into convolution_add_relu(..., other),
// when all are float32, the convolution is 2-D, not transposed and ungrouped or depthwise (what
// the optimized kernel's fast paths take; not depthwise for the residual form), every
// intermediate is read only by the next node (and is not a graph output) and no node is
// delegated; returns how many it fused.
int fuse_conv_relu(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
