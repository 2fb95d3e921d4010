// Attention fusion for the "optimized" kernel library: exported transformers decompose
// attention into bmm -> (mul|div by a constant) -> (add mask | where(mask, -inf, .)) ->
// _softmax(-1) -> bmm, with views between; this pass replaces each such chain by one call of
// pteron::sdpa (kernels/optimized/op_sdpa.cpp), which never stores the score matrix.
// pteron::sdpa has no ExecuTorch kernel, so the pass belongs to the "optimized" kernel library
// (compiler/partition/registry.cpp) and runs only when that library is selected.
#pragma once

#include <unordered_set>

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
// step, no node of it delegated) into pteron::sdpa and removes the chain's other nodes;
// returns how many chains it fused.
int fuse_attention(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
