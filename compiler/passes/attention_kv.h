// Attention over a KV cache in place, for the "optimized" kernel library. After fuse_attention,
// a decoder exported by transformers (its sdpa or eager attention over a static cache) reads
// each layer's cache through copies made on every call:
//   keys:   permute(view(expand(unsqueeze(k_cache, 2))))   grouped-query heads repeated, then
//           transposed for q @ k^T; often scaled by a constant (the math sdpa's sqrt(scale))
//   values: view(expand(unsqueeze(v_cache, 2)))
// that is, the whole cache copied two or three times per layer and step, for a one-token query.
// This pass rewrites pteron::sdpa(q, k_t, v, ...) whose k_t and v come from such chains into
// pteron::sdpa_kv(q, k_cache, v_cache, ...) (kernels/optimized/op_sdpa_kv.cpp), which reads the
// caches as stored; the constant scales of q and k fold into the op's scale. Runs after
// fuse_attention in the optimized library's passes (compiler/partition/registry.cpp).
#pragma once

#include <unordered_set>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// pteron::sdpa_kv(Tensor q, Tensor k, Tensor v, Tensor? mask, float scale, int heads,
// bool safe_softmax) -> Tensor, and its out variant: q [B * heads, Lq, D], k [B, Hkv, Lk, D],
// v [B, Hkv, Lk, Dv] -> [B * heads, Lq, Dv]; query head h reads key/value head
// h / (heads / Hkv); the mask broadcasts against [B, heads, Lq, Lk].
const ir::OpSchema& sdpa_kv_schema();

// Rewrites every pteron::sdpa reading keys and values through the chains above (each
// intermediate used only by the chain, none delegated); returns how many it rewrote.
int attention_kv(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
