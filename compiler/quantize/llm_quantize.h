// pteron's own LLM weight quantization (`pteron compile --quantize llm-8da4w|llm-int8|llm-int4
// [--group-size G]`, Python `to_edge_transform_and_lower(ep, quantize="llm-8da4w")`): needs no
// calibration. Every linear with a constant float32 weight [N, K] and every embedding table
// gets torchao's SYMMETRIC quantization (bit for bit, compiler/passes/quantized_linear.h) and
// becomes the optimized library's op directly:
//   llm-int8   int8 weights, per channel (G = K) unless --group-size  -> pteron::linear_q8w
//   llm-int4   int4 weights in groups (default 32)                    -> pteron::linear_q4w
//   llm-8da4w  int4 weights in groups (default 32) and per-token dynamic int8 activations
//              (ExecuTorch's "8da4w")                                 -> pteron::linear_8da4w
// Embedding tables are quantized weight-only with the scheme's bits and group
// (pteron::embedding_q8w / embedding_q4w). A mixture of experts' grouped product
// (transformers::grouped_mm_fallback, aten::_grouped_mm) over constant float32 experts
// [E, K, N] gets the same per expert, each expert's output channels a linear's rows
// (pteron::grouped_mm_q8w / grouped_mm_q4w / grouped_mm_8da4w): in an MoE model the experts
// are most of the weights. The programs need the "optimized" kernel library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

enum class LlmScheme { Int8, Int4, A8W4 };

// True for "llm-int8", "llm-int4", "llm-8da4w".
bool is_llm_scheme(std::string_view name);
// Throws CompileError listing the choices.
LlmScheme parse_llm_scheme(std::string_view name);

struct LlmQuantizeOptions {
  LlmScheme scheme = LlmScheme::A8W4;
  int64_t group_size = 0;  // 0: the scheme's default (per channel for int8, 32 for int4)
};

// Rewrites the graph's linears, expert layers and embeddings; returns a report line
// ("llm-8da4w: 7 linear(s), 1 embedding(s), group 32"; "N expert layer(s), " after the linears
// when there are any). Throws CompileError naming the node when the group size does
// not fit a weight.
std::string quantize_llm(ir::Graph& graph, const LlmQuantizeOptions& options);

}  // namespace pteron::compiler
