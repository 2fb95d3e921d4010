// Graph passes between the frontend and the emitter. Each keeps debug handles and leaves the
// graph verified; each returns how many nodes it changed so the compile report can say so.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// Removes nodes whose outputs nobody uses (all pteron ops are side-effect free).
int remove_dead_code(ir::Graph& graph);

// Removes ops that do nothing at run time: alias/detach/lift_fresh_copy, clone and _to_copy
// that keep dtype and layout, view/reshape/expand to the same shape, identity permutes and
// full slices. A no-op whose result is a graph output stays, so outputs keep their own memory.
int remove_noops(ir::Graph& graph);

// Collapses chains of views (view of a view, permute of a permute) into one op.
int simplify_views(ir::Graph& graph);

// Rewrites the core-ATen decompositions of hardswish (x * clamp(x + 3, 0, 6) / 6) and
// hardsigmoid (clamp(x + 3, 0, 6) / 6) back into aten::hardswish / aten::hardsigmoid, which every
// backend runs as one op (MobileNetV3's activations and squeeze-excite gates).
int recompose_hard_activations(ir::Graph& graph);

// Folds inference batch norm into the convolution before it (new weights and bias), when the
// convolution's only user is the batch norm and only its normalised output is used.
int fold_batch_norm(ir::Graph& graph);

// Rewrites 1-D convolutions as 2-D ones of height 1 (unsqueeze -> convolution -> squeeze), then
// sinks the squeezes below elementwise ops and cancels them against unsqueezes, so that every
// backend taking 2-D convolutions takes 1-D layers, chained without views between them.
int conv1d_as_conv2d(ir::Graph& graph);

// Gives constants and intermediates the contiguous dim order (constants are rearranged at
// compile time). Export records strided views (a transposed weight, a permuted activation);
// kernels, ExecuTorch's included, want one layout per call. Inputs keep theirs.
int normalize_dim_orders(ir::Graph& graph);

// Rewrites addmm(bias, x, permute(W)), mm(x, permute(W)) and bmm(x, expand(permute(W))) (a
// weight broadcast over a batch) with a constant W into linear(x, W, bias): the weight is used as
// stored, with no transpose or copy per batch entry at compile or run time.
int fuse_linear(ir::Graph& graph);

// Rewrites select(view(linear(x, W, b)), dim, i) that keeps one row of the linear's output into
// linear(select(x, 0, row), W, b): a causal LM's last-token logits then cost one row vector
// times the vocabulary projection instead of a full matrix product.
int select_before_linear(ir::Graph& graph);

// Moves a one-row selection (select of one position whose other leading dims are 1) above the
// row-wise ops producing it (views keeping the last dim, layer norm over the last dim, linear,
// relu/gelu/silu/sigmoid/tanh, add/sub/mul/div with row-invariant other operands), as long as
// their full results have no other use: a causal LM's last layer then computes its
// out-projection, FFN and norms for the last token only. Returns how many nodes it moved.
int select_rows_early(ir::Graph& graph);

// Runs nodes whose inputs are all constants on the host kernels and replaces their outputs by
// folded constants (e.g. transposed weights). Skips results much larger than their inputs.
int fold_constants(ir::Graph& graph);

// Every node (except those in `delegated`) must have a kernel form and a kernel registered by
// one of `libraries` (runtime library names, e.g. {"optimized", "portable"}); throws
// CompileError listing each missing one (op, node, source line) so nothing fails late on the
// device.
void check_kernels_available(const ir::Graph& graph,
                             const std::unordered_set<ir::NodeId>& delegated = {},
                             const std::vector<std::string>& libraries = {"portable"});

struct PassReport {
  std::vector<std::string> lines;  // "remove_noops: 12 node(s)"
};

// The default pipeline: simplify, remove no-ops, fold batch norm and constants, dead code.
PassReport run_default_passes(ir::Graph& graph);

}  // namespace pteron::compiler
