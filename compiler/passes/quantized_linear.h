// Quantized LLM linears and embeddings for the "optimized" kernel library.
//
// torchao's export (what ExecuTorch users produce with quantize_(model, ...)) keeps integer
// weights behind torchao::dequantize_affine after run_decompositions():
//   weight-only (IntxWeightOnlyConfig, int8 or int4, per channel or per group):
//     linear(x, dequantize_affine(Wq, [1, G], scale, zp, int8, qmin, qmax), b)
//     embedding(dequantize_affine(Wq, [1, G], ...), indices)
//   8da4w (Int8DynamicActivationIntxWeightConfig(weight_dtype=int4)): the input is also
//     s, z = choose_qparams_affine(x, 'ASYMMETRIC', [1, .., 1, K], int8, -128, 127)
//     dequantize_affine(quantize_affine(x, [1, .., K], s, z, int8, -128, 127), ...)
//   8da8w (the same config with weight_dtype=int8, its default): the same, int8 weights.
// quantized_linear() rewrites these into pteron::linear_q8w / linear_q4w / linear_8da4w /
// linear_8da8w and pteron::embedding_q8w / embedding_q4w (kernels/optimized/
// op_linear_quantized.cpp, op_embedding_quantized.cpp), packing int4 weights two per byte at
// compile time. Variants the kernels do not cover (asymmetric weights, int4 groups that are
// not multiples of 32, ...) are a CompileError naming the node and why.
#pragma once

#include <cfloat>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

enum class QLinearKind { Q8W, Q4W, A8W4, A8W8 };

// The functional schemas of the ops the pass writes (each registered with its .out variant on
// first use): pteron::linear_q8w / linear_q4w (input, weight, scales, bias?, group_size),
// pteron::linear_8da4w (input, weight, scales, weight_sums, bias?, group_size, eps),
// pteron::linear_8da8w (input, weight, scales, bias?, group_size, eps) and
// pteron::embedding_q8w / embedding_q4w (weight, scales, indices, group_size).
const ir::OpSchema& linear_q8w_schema();
const ir::OpSchema& linear_q4w_schema();
const ir::OpSchema& linear_8da4w_schema();
const ir::OpSchema& linear_8da8w_schema();
const ir::OpSchema& embedding_quantized_schema(bool int4);
// pteron::grouped_mm_q8w / grouped_mm_q4w (input, weight, scales, offs, group_size) and
// pteron::grouped_mm_8da4w (input, weight, scales, weight_sums, offs, group_size, eps): a
// mixture-of-experts product with one quantized matrix per expert
// (kernels/optimized/op_grouped_mm_quantized.cpp).
const ir::OpSchema& grouped_mm_weight_only_schema(bool int4);
const ir::OpSchema& grouped_mm_8da4w_schema();

// Integer weights [rows, cols] (values in [-8, 7] for 4 bits) with one float scale per group
// of `group` consecutive values of a row: weight = q * scales[row * (cols / group) + k / group].
struct QuantizedMatrix {
  int64_t rows = 0, cols = 0, group = 0;
  int bits = 8;
  std::vector<int8_t> q;
  std::vector<float> scales;
};

// torchao's SYMMETRIC mapping (choose_qparams_affine + quantize_affine), bit for bit: per
// group, scale = max(|min|, |max|) / ((qmax - qmin) / 2) clamped to FLT_MIN, q = clamp(
// round(w * (1 / scale)), qmin, qmax) with [qmin, qmax] = [-8, 7] (4 bits) or [-128, 127].
// Throws CompileError when `group` does not divide `cols` (or, for 4 bits, is not a multiple
// of 32).
QuantizedMatrix quantize_symmetric(const float* w, int64_t rows, int64_t cols, int64_t group,
                                   int bits);

// Replaces the linear node `linear` (its output kept) by the pteron op of `kind` reading
// `input` with `weights` (packed into new constants) and `bias` (a tensor or None); `eps`
// bounds the dynamic activation scales from below (A8W4; torchao's default FLT_MIN).
void rewrite_as_quantized_linear(ir::Graph& graph, ir::NodeId linear, ir::ValueId input,
                                 const QuantizedMatrix& weights, const ir::Argument& bias,
                                 QLinearKind kind, double eps = FLT_MIN);

// The same for a grouped product node (a mixture of experts' transformers::grouped_mm_fallback
// or aten::_grouped_mm, its output kept) reading rows `input` sorted by expert with offsets
// `offs`: `experts` holds one [N, K] matrix per expert, all of one shape and group; `kind`
// Q8W, Q4W or A8W4 (A8W8 has no grouped kernel: CompileError).
void rewrite_as_quantized_grouped_mm(ir::Graph& graph, ir::NodeId grouped, ir::ValueId input,
                                     ir::ValueId offs, const std::vector<QuantizedMatrix>& experts,
                                     QLinearKind kind, double eps = FLT_MIN);

// The same for an embedding node looking up `indices` in a quantized table.
void rewrite_as_quantized_embedding(ir::Graph& graph, ir::NodeId embedding, ir::ValueId indices,
                                    const QuantizedMatrix& table);

// The pass: rewrites every torchao pattern above outside `delegated`; returns how many nodes
// it rewrote. Throws CompileError for a torchao weight it cannot run.
int quantized_linear(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated = {});

}  // namespace pteron::compiler
