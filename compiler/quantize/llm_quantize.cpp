#include "compiler/quantize/llm_quantize.h"

#include <optional>

#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/quantized_linear.h"

namespace pteron::compiler {
namespace {

// The constant float32 2-D weight of `node` (a linear's or an embedding's), or nullptr.
const ir::Value* float_weight(const ir::Graph& g, const ir::Node& node) {
  if (!node.arg("weight").is_tensor()) return nullptr;
  const ir::Value& w = g.value(node.arg("weight").tensor());
  if (!w.is_constant() || w.spec.dtype != ScalarType::Float || w.spec.rank() != 2 ||
      !w.spec.is_contiguous()) {
    return nullptr;
  }
  return &w;
}

// A mixture of experts' grouped product over constant float32 experts mat2 [E, K, N] (any dim
// order): its rows input, offsets offs and experts; nullopt for other forms (bias, another
// output dtype, no offsets, bfloat16), which stay as they are.
struct GroupedProduct {
  ir::ValueId input, offs;
  const ir::Value* experts;
};

std::optional<GroupedProduct> grouped_product(const ir::Graph& g, const ir::Node& node) {
  const bool aten = node.is(ops::aten::_grouped_mm);
  if (!aten && !node.is(ops::transformers::grouped_mm_fallback)) return std::nullopt;
  const ir::Argument& input = node.arg(aten ? "self" : "input");
  const ir::Argument& mat2 = node.arg(aten ? "mat2" : "weight");
  const ir::Argument& offs = node.arg("offs");
  if (!input.is_tensor() || !mat2.is_tensor() || !offs.is_tensor()) return std::nullopt;
  if (aten && (!node.arg("bias").is_none() || !node.arg("out_dtype").is_none())) {
    return std::nullopt;
  }
  const ir::Value& w = g.value(mat2.tensor());
  if (!w.is_constant() || w.spec.dtype != ScalarType::Float || w.spec.rank() != 3 ||
      g.value(node.outputs[0]).spec.dtype != ScalarType::Float ||
      g.value(input.tensor()).spec.rank() != 2) {
    return std::nullopt;
  }
  return GroupedProduct{input.tensor(), offs.tensor(), &w};
}

// Expert e of mat2 [E, K, N] as a linear's weight [N, K] (rows: output channels), quantized.
QuantizedMatrix quantize_expert(const ir::Value& experts, int64_t e, int64_t group, int bits) {
  const std::vector<int64_t> st = experts.spec.strides();
  const int64_t K = experts.spec.sizes[1], N = experts.spec.sizes[2];
  const auto* w = reinterpret_cast<const float*>(experts.constant->bytes.data());
  std::vector<float> rows(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      rows[static_cast<size_t>(n * K + k)] = w[e * st[0] + k * st[1] + n * st[2]];
  return quantize_symmetric(rows.data(), N, K, group, bits);
}

}  // namespace

bool is_llm_scheme(std::string_view name) {
  return name == "llm-int8" || name == "llm-int4" || name == "llm-8da4w";
}

LlmScheme parse_llm_scheme(std::string_view name) {
  if (name == "llm-int8") return LlmScheme::Int8;
  if (name == "llm-int4") return LlmScheme::Int4;
  if (name == "llm-8da4w") return LlmScheme::A8W4;
  throw CompileError("unknown LLM quantization '" + std::string(name) +
                     "' (choices: llm-8da4w, llm-int8, llm-int4)");
}

std::string quantize_llm(ir::Graph& graph, const LlmQuantizeOptions& options) {
  if (options.group_size < 0) {
    throw CompileError("group size " + std::to_string(options.group_size) + " must be positive");
  }
  const int bits = options.scheme == LlmScheme::Int8 ? 8 : 4;
  const char* name = options.scheme == LlmScheme::Int8   ? "llm-int8"
                     : options.scheme == LlmScheme::Int4 ? "llm-int4"
                                                         : "llm-8da4w";
  if (bits == 4 && options.group_size % 32 != 0) {
    throw CompileError(std::string(name) + ": int4 group size " +
                       std::to_string(options.group_size) + " is not a multiple of 32");
  }
  const QLinearKind kind = options.scheme == LlmScheme::Int8   ? QLinearKind::Q8W
                           : options.scheme == LlmScheme::Int4 ? QLinearKind::Q4W
                                                               : QLinearKind::A8W4;
  auto group_for = [&](const ir::Node& node, int64_t cols) {
    const int64_t group = options.group_size != 0 ? options.group_size : (bits == 8 ? cols : 32);
    if (cols % group != 0) {
      throw CompileError(node.describe() + ": " + name + " group size " + std::to_string(group) +
                         " does not divide its weight's row length " + std::to_string(cols));
    }
    return group;
  };
  int linears = 0, embeddings = 0, expert_layers = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    const ir::Node& node = graph.node(id);
    if (const std::optional<GroupedProduct> p = grouped_product(graph, node)) {
      const int64_t count = p->experts->spec.sizes[0], K = p->experts->spec.sizes[1];
      const int64_t group = group_for(node, K);
      std::vector<QuantizedMatrix> experts;
      for (int64_t e = 0; e < count; ++e)
        experts.push_back(quantize_expert(*p->experts, e, group, bits));
      if (!experts.empty()) {
        rewrite_as_quantized_grouped_mm(graph, id, p->input, p->offs, experts, kind);
        ++expert_layers;
      }
      continue;
    }
    const std::string op = node.op.str();
    const bool linear = op == ops::aten::linear;
    if (!linear && op != ops::aten::embedding) continue;
    const ir::Value* w = float_weight(graph, node);
    if (w == nullptr || graph.value(node.outputs[0]).spec.dtype != ScalarType::Float) continue;
    const int64_t rows = w->spec.sizes[0], cols = w->spec.sizes[1];
    const int64_t group = group_for(node, cols);
    const QuantizedMatrix m = quantize_symmetric(
        reinterpret_cast<const float*>(w->constant->bytes.data()), rows, cols, group, bits);
    if (linear) {
      const ir::Argument bias = node.arg("bias");
      rewrite_as_quantized_linear(graph, id, node.arg("input").tensor(), m, bias, kind);
      ++linears;
    } else {
      rewrite_as_quantized_embedding(graph, id, node.arg("indices").tensor(), m);
      ++embeddings;
    }
  }
  remove_dead_code(graph);  // the float weights
  std::string group = options.group_size != 0 ? std::to_string(options.group_size)
                                              : (bits == 8 ? "per channel" : "32");
  std::string experts;
  if (expert_layers > 0) experts = std::to_string(expert_layers) + " expert layer(s), ";
  return std::string(name) + ": " + std::to_string(linears) + " linear(s), " + experts +
         std::to_string(embeddings) + " embedding(s), group " + group;
}

}  // namespace pteron::compiler
