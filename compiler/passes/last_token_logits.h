// Logits for the last token only (`pteron compile --last-token-logits`, Python
// `to_edge_transform_and_lower(..., last_token_logits=True)`): a decoder exported with
// transformers' convert_and_export_with_cache returns logits for every token of the call,
// [1, T, vocab], so a prompt prefilled in one call of T tokens runs the vocabulary projection T
// times where generation reads one row (llama-110m, T = 128: a third of the prefill's work).
// ExecuTorch's LLM export computes only the last row by default. This pass does the same for
// any program whose first output is a linear's result over tokens: the linear reads only the
// last token's row (a slice before it) and the output becomes [1, 1, vocab]. The runtime's
// generator reads the last row either way; a caller that wants every row (perplexity over a
// prompt) leaves the option off, which keeps the Hugging Face-compatible output.
#pragma once

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// Rewrites output 0 = view*(linear(x, W, b)) with x [..., T, D] (every leading dim 1) into
// linear(slice(x, T dim, -1), W, b) viewed as output 0's rank with T = 1. Returns 1 when it
// rewrote, 0 when output 0 is not such a linear (nothing changes). Runs on aten ops, before
// quantization and partitioning, so the smaller linear is what they see.
int last_token_logits(ir::Graph& graph);

}  // namespace pteron::compiler
