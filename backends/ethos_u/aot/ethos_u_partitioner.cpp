#include "backends/ethos_u/aot/ethos_u_partitioner.h"

#include <nlohmann/json.hpp>

#include "backends/ethos_u/aot/payload_builder.h"
#include "backends/ethos_u/aot/vela.h"
#include "backends/tosa/aot/tosa_lowering.h"
#include "compiler/compile_error.h"
#include "compiler/partition/registry.h"

namespace pteron::ethos_u {

using compiler::LoweredRegion;
using compiler::SupportDecision;
using tosa_aot::TosaProfile;

namespace {

const bool g_registered = compiler::register_partitioner(
    "ethos-u", [] { return std::make_unique<EthosUPartitioner>(); });

LoweredRegion refuse(std::string why) {
  LoweredRegion r;
  r.reason = std::move(why);
  return r;
}

PayloadIo payload_io(const tosa_aot::TosaIo& io, uint32_t index) {
  PayloadIo p;
  p.name = io.tosa_name;
  p.shape = io.shape;
  p.dim_order = io.dim_order;
  p.dtype = int8_t(io.dtype);
  p.scale = io.scale;
  p.zero_point = io.zero_point;
  p.tosa_index = index;
  return p;
}

// The TOSA I/O carrying each of `values`, in that order (the delegate call's order).
bool match_io(const std::vector<compiler::ir::ValueId>& values,
              const std::vector<tosa_aot::TosaIo>& tosa, std::vector<PayloadIo>* out,
              std::vector<std::vector<uint8_t>>* dim_orders) {
  if (values.size() != tosa.size()) return false;
  for (compiler::ir::ValueId v : values) {
    size_t k = 0;
    while (k < tosa.size() && tosa[k].value != v) ++k;
    if (k == tosa.size()) return false;
    out->push_back(payload_io(tosa[k], uint32_t(k)));
    dim_orders->push_back(tosa[k].dim_order);
  }
  return true;
}

bool is_qdq(const compiler::ir::Node& n) {
  return n.op.str().rfind("quantized_decomposed::", 0) == 0;
}

// Whether the node sits in a quantized graph (a Q/DQ node, reads a dequantize, or feeds a
// quantize): then a refusal is about the op, not about missing quantization.
bool quantized_context(const compiler::ir::Graph& graph, const compiler::ir::Node& node) {
  if (is_qdq(node)) return true;
  for (compiler::ir::ValueId v : node.inputs()) {
    const auto& value = graph.value(v);
    if (value.is_intermediate() && is_qdq(graph.node(value.producer))) return true;
  }
  for (compiler::ir::ValueId v : node.outputs) {
    for (compiler::ir::NodeId u : graph.value(v).users) {
      if (is_qdq(graph.node(u))) return true;
    }
  }
  return false;
}

}  // namespace

bool partitioner_registered() { return g_registered; }

SupportDecision EthosUPartitioner::supports(const compiler::ir::Graph& graph,
                                            const compiler::ir::Node& node) const {
  SupportDecision d = tosa_aot::tosa_supports(graph, node, TosaProfile::Int);
  if (d.supported) {
    // A dequantize whose reader stays on the CPU would make a float region output (INT regions
    // produce int8): it stays outside with its reader.
    const std::string op = node.op.str();
    if (op.rfind("quantized_decomposed::dequantize_per_", 0) == 0 && !node.outputs.empty()) {
      const compiler::ir::ValueId v = node.outputs[0];
      for (compiler::ir::ValueId out : graph.outputs()) {
        if (out == v) return SupportDecision::no("its float result is a graph output (int8 only)");
      }
      for (compiler::ir::NodeId u : graph.value(v).users) {
        SupportDecision user = tosa_aot::tosa_supports(graph, graph.node(u), TosaProfile::Int);
        if (!user.supported) {
          return SupportDecision::no("its reader '" + graph.node(u).describe() +
                                     "' stays on the CPU (" + user.reason + ")");
        }
      }
    }
    return d;
  }
  if (!quantized_context(graph, node) &&
      tosa_aot::tosa_supports(graph, node, TosaProfile::Fp).supported) {
    return SupportDecision::no("not quantized (the Ethos-U runs int8 only; quantize the model, "
                               "e.g. --quantize ethos-u): " + d.reason);
  }
  return d;
}

LoweredRegion EthosUPartitioner::lower(const compiler::ir::Graph& graph,
                                       const compiler::Region& region) const {
  const compiler::Target* target = compiler::compiling_target();
  if (target == nullptr) return refuse("no target to compile for (the [npu] table)");
  // A target without [npu] or a missing Vela is the user's setup, not the region's fault:
  // those stay compile errors (one line naming the target or the Vela path).
  NpuConfig config = npu_config_of(*target);
  tosa_aot::TosaLowering tosa = tosa_aot::lower_to_tosa(graph, region.nodes, TosaProfile::Int);
  if (!tosa.ok) return refuse("TOSA lowering: " + tosa.reason);
  LoweredRegion out;
  std::vector<PayloadIo> inputs, outputs;
  if (!match_io(region.inputs, tosa.inputs, &inputs, &out.input_dim_orders) ||
      !match_io(region.outputs, tosa.outputs, &outputs, &out.output_dim_orders)) {
    return refuse("the TOSA graph's inputs/outputs are not the region's");
  }
  uint64_t planned = 0;
  try {
    planned = tosa_planned_bytes(tosa.tosa);
  } catch (const compiler::CompileError& e) {
    return refuse(e.what());
  }
  VelaOutput vela;
  try {
    vela = run_vela(tosa.tosa, config);
  } catch (const compiler::CompileError& e) {
    std::string what = e.what();
    if (what.find("cannot run Vela") != std::string::npos) throw;
    return refuse(what);
  }
  out.payload = build_payload(tosa.tosa, inputs, outputs, config, vela, planned);
  out.ok = true;
  // Load-time memory the emulated driver takes from the method allocator: the executor's
  // planned arena and tables, its state, and (when the payload lands unaligned) a TOSA copy.
  const uint64_t method_bytes = planned + tosa.tosa.size() + 1024;
  const std::string text = std::to_string(method_bytes);
  out.compile_specs.push_back({"pteron.method_bytes", std::vector<uint8_t>(text.begin(), text.end())});
  const VelaEstimate& e = vela.estimate;
  nlohmann::json j = {{"runtime", "emulated on the TOSA executor unless the board has an NPU driver"},
                      {"accelerator", config.accelerator},
                      {"system_config", config.system_config},
                      {"memory_mode", config.memory_mode},
                      {"vela_version", vela.version},
                      {"npu_cycles", e.npu_cycles},
                      {"macs", e.macs},
                      {"inference_time_s", e.inference_time_s},
                      {"sram_bytes", e.sram_bytes},
                      {"off_chip_flash_bytes", e.off_chip_flash_bytes},
                      {"on_chip_flash_bytes", e.on_chip_flash_bytes},
                      {"dram_bytes", e.dram_bytes},
                      {"scratch_bytes", vela.scratch_size},
                      {"fast_scratch_bytes", vela.fast_scratch_size},
                      {"command_stream_bytes", vela.command_stream.size()},
                      {"weight_bytes", vela.weights.size()},
                      {"npu_ops", e.npu_ops},
                      {"tosa_ops", tosa.tosa_ops},
                      {"tosa_bytes", tosa.tosa.size()},
                      {"tosa_executor_bytes", planned}};
  out.report_json = j.dump();
  return out;
}

}  // namespace pteron::ethos_u
