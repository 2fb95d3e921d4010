// Floating-point operation estimates per node, for the delegation report's "share of FLOPs"
// figures. One multiply-add counts as 2 FLOPs; bias adds, im2col and data movement count 0.
#pragma once

#include <cstdint>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// convolution: 2 * out.numel * (Cin / groups) * prod(kernel); linear: 2 * out.numel * K;
// mm/addmm/bmm/matmul: 2 * out.numel * K; scaled_dot_product_attention: 4 * B*H * L * S * E;
// elementwise and reductions: one per output element (per input element for reductions);
// views, copies, indexing: 0. Shapes the node does not carry give 0, never a guess.
uint64_t estimate_flops(const ir::Graph& graph, const ir::Node& node);

}  // namespace pteron::compiler
