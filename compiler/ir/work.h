// How much arithmetic a node does, shared by everything that weighs it: the delegation
// report's "share of FLOPs" (estimate_flops) and the partitioners' cost rules (multiply_adds,
// region_work), so that a matmul or a convolution is counted one way everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// Whether an op (its name without namespace or overload) is a direct convolution: aten's
// convolution, conv1d and conv2d, and the fused forms the optimized library's passes make
// (convolution_relu, _clamp, _silu, _hardswish, _scaled, _add_relu); not Winograd's
// conv2d_winograd, whose weights are transformed.
bool is_direct_convolution(const std::string& op_name);

// Multiply-adds of the products: convolution (and its fused and Winograd forms):
// out.numel * (Cin / groups) * prod(kernel); linear, mm, bmm, matmul, addmm: out.numel * K;
// scaled dot-product attention: 2 * B*H * L * S * E (Q K^T and P V). 0 for every other op, and
// for shapes the node does not carry, never a guess.
uint64_t multiply_adds(const ir::Graph& graph, const ir::Node& node);

// Floating-point operations: 2 per multiply-add above; elementwise ops and reductions one per
// output element (per input element for reductions); views, copies, indexing: 0.
uint64_t estimate_flops(const ir::Graph& graph, const ir::Node& node);

// The work a delegate's boundary-cost rule weighs against a submit and its copies: multiply-adds
// where a node has them, else the elements it outputs (Vulkan and VGF regions).
double region_work(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

}  // namespace pteron::compiler
