// How much arithmetic a node does, shared by everything that weighs it: the delegation
// report's "share of FLOPs" (estimate_flops) and the partitioners' cost rules (multiply_adds,
// region_work), so that a matmul or a convolution is counted one way everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

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
