#include "compiler/compile_error.h"
#include "compiler/passes/host_runner.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// Folding trades program size for run time; results that grow far beyond their inputs (a
// broadcast mask, an expanded table) are cheaper to compute on the device.
constexpr uint64_t kFreeBytes = 1 << 20;
constexpr uint64_t kGrowthFactor = 4;

bool foldable(const ir::Graph& g, const ir::Node& node) {
  // Quantized weights stay int8 constants behind their dequantize (4x smaller, and backends
  // match dequantize -> op -> quantize patterns; the optimized library rewrites torchao's
  // dequantize_affine -> linear into its quantized linears).
  if ((node.op.ns == "quantized_decomposed" || node.op.ns == "torchao") &&
      node.op.name.rfind("dequantize", 0) == 0)
    return false;
  uint64_t in_bytes = 0, out_bytes = 0;
  for (ir::ValueId v : node.inputs()) {
    if (!g.value(v).is_constant()) return false;
    in_bytes += g.value(v).spec.nbytes();
  }
  for (ir::ValueId v : node.outputs) {
    if (v == ir::kNoValue) return false;
    if (g.is_output(v)) return false;
    out_bytes += g.value(v).spec.nbytes();
  }
  return out_bytes <= kGrowthFactor * in_bytes + kFreeBytes;
}

}  // namespace

int fold_constants(ir::Graph& graph) {
  int folded = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (!graph.has_node(id)) continue;
    if (graph.is_dynamic_node(id)) continue;  // sizes are upper bounds, not exact
    const ir::Node& node = graph.node(id);
    if (!foldable(graph, node)) continue;
    std::vector<std::vector<uint8_t>> results;
    try {
      results = run_node_on_host(graph, node, [&](ir::ValueId v) -> std::span<const uint8_t> {
        const ir::Value& value = graph.value(v);
        return value.constant ? value.constant->bytes : std::span<const uint8_t>();
      });
    } catch (const CompileError&) {
      continue;  // no host kernel for it: the device computes it instead
    }
    const std::vector<ir::ValueId> outputs = node.outputs;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const ir::Value& out = graph.value(outputs[i]);
      ir::ConstantData data = ir::ConstantData::owned(std::move(results[i]), "folded." + out.name);
      const ir::ValueId c =
          graph.add_constant(graph.unique_name(out.name + "_folded"), out.spec, std::move(data));
      graph.replace_all_uses(outputs[i], c);
    }
    graph.remove_node(id);
    ++folded;
  }
  return folded;
}

}  // namespace pteron::compiler
