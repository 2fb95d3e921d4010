#include "compiler/quantize/llm_quantize.h"

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
  int linears = 0, embeddings = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    const ir::Node& node = graph.node(id);
    const std::string op = node.op.str();
    const bool linear = op == ops::aten::linear;
    if (!linear && op != ops::aten::embedding) continue;
    const ir::Value* w = float_weight(graph, node);
    if (w == nullptr || graph.value(node.outputs[0]).spec.dtype != ScalarType::Float) continue;
    const int64_t rows = w->spec.sizes[0], cols = w->spec.sizes[1];
    const int64_t group = options.group_size != 0 ? options.group_size : (bits == 8 ? cols : 32);
    if (cols % group != 0) {
      throw CompileError(node.describe() + ": " + name + " group size " + std::to_string(group) +
                         " does not divide its weight's row length " + std::to_string(cols));
    }
    const QuantizedMatrix m = quantize_symmetric(
        reinterpret_cast<const float*>(w->constant->bytes.data()), rows, cols, group, bits);
    if (linear) {
      const QLinearKind kind = options.scheme == LlmScheme::Int8   ? QLinearKind::Q8W
                               : options.scheme == LlmScheme::Int4 ? QLinearKind::Q4W
                                                                   : QLinearKind::A8W4;
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
  return std::string(name) + ": " + std::to_string(linears) + " linear(s), " +
         std::to_string(embeddings) + " embedding(s), group " + group;
}

}  // namespace pteron::compiler
