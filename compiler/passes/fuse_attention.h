// Attention fusion for the "optimized" kernel library: exported transformers decompose
// attention into bmm -> (mul|div by a constant) -> (add mask | where(mask, -inf, .)) ->
// _softmax(-1) -> bmm, with views between; this pass replaces each such chain by one call of
// pteron::sdpa (kernels/optimized/op_sdpa.cpp), which never stores the score matrix.
// pteron::sdpa has no ExecuTorch kernel, so compile() runs the pass only when "optimized" is
// among the selected kernel libraries.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::sdpa(Tensor q, Tensor k_t, Tensor v, Tensor? mask, float scale, int heads) -> Tensor
// and its out-variant pteron::sdpa.out(..., *, Tensor(a!) out), added to the global schema
// registry on first use. q [N, Lq, D], k_t [N, D, Lk], v [N, Lk, Dv] -> [N, Lq, Dv], N = batch
// * heads; mask broadcasts against [N / heads, heads, Lq, Lk], float added to the scores or
// bool with true meaning "masked out".
const ir::OpSchema& sdpa_schema();

// Rewrites every matching attention chain (float32, each intermediate used only by the next
// step) into pteron::sdpa; returns how many. Leaves the dead chain to remove_dead_code.
int fuse_attention(ir::Graph& graph);

}  // namespace pteron::compiler
