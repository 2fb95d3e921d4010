#include "backends/ethos_u/aot/ethos_u_partitioner.h"

#include <nlohmann/json.hpp>

#include "backends/ethos_u/aot/payload_builder.h"
#include "backends/ethos_u/aot/vela.h"
#include "backends/tosa/aot/tosa_lowering.h"
#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/partition/registry.h"

namespace pteron::ethos_u {

namespace ops = compiler::ops;
using compiler::LoweredRegion;
using compiler::SupportDecision;
using tosa_aot::TosaProfile;

namespace {

const bool g_registered = compiler::register_partitioner(
    "ethos-u",
    [](const compiler::BackendOptions&) { return std::make_unique<EthosUPartitioner>(); });

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

std::vector<int64_t> ints_arg(const compiler::ir::Node& n, const char* name) {
  const compiler::ir::Argument& a = n.arg(name);
  if (a.is<std::vector<int64_t>>()) return a.get<std::vector<int64_t>>();
  if (a.is<int64_t>()) return {a.to_int()};
  return {};
}

// Vela's Ethos-U55/U65 constraints on TOSA operators (`vela --supported-ops-report`, Vela
// 5.2.0) that the INT lowering of these ATen ops can break. TOSA input has no CPU fallback, so
// a node breaking one would fail its whole region in Vela: refuse the node instead, so the
// region forms without it. "" when the node is fine.
std::string vela_u55_constraint(const compiler::ir::Graph& graph, const compiler::ir::Node& n) {
  // A stride only matters along a dimension with more than one output (a global pool's
  // stride is its kernel, and Vela takes it).
  std::vector<int64_t> out_hw;
  if (!n.outputs.empty()) {
    const auto& sizes = graph.value(n.outputs[0]).spec.sizes;
    if (sizes.size() == 4) out_hw = {sizes[2], sizes[3]};
  }
  auto strides_ok = [&](const std::vector<int64_t>& s) {
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = s.size() == 1 ? 0 : i;
      bool single = out_hw.size() == 2 &&
                    (s.size() == 1 ? out_hw[0] == 1 && out_hw[1] == 1 : d < 2 && out_hw[d] == 1);
      if (!single && (s[i] < 1 || s[i] > 3)) return false;
    }
    return true;
  };
  if (n.is(ops::aten::convolution)) {
    std::vector<int64_t> stride = ints_arg(n, "stride");
    const auto& w = graph.value(n.arg("weight").tensor()).spec.sizes;
    if (!strides_ok(stride)) return "Vela (U55/U65): CONV2D stride must be 1..3";
    if (w.size() == 4 && (w[2] > 64 || w[2] * w[3] > 4096)) {
      return "Vela (U55/U65): CONV2D kernel_y <= 64 and kernel_x*kernel_y <= 4096";
    }
  } else if (n.is(ops::aten::avg_pool2d)) {
    std::vector<int64_t> kernel = ints_arg(n, "kernel_size"), stride = ints_arg(n, "stride"),
                         pad = ints_arg(n, "padding");
    if (!strides_ok(stride.empty() ? kernel : stride)) {
      return "Vela (U55/U65): AVG_POOL2D stride must be 1..3";
    }
    bool padded = false;
    for (int64_t p : pad) padded = padded || p != 0;
    for (int64_t k : kernel) {
      if (padded && k > 8) return "Vela (U55/U65): AVG_POOL2D with padding needs kernel <= 8";
    }
  } else if (n.is(ops::aten::max_pool2d_with_indices)) {
    std::vector<int64_t> kernel = ints_arg(n, "kernel_size"), stride = ints_arg(n, "stride");
    if (!strides_ok(stride.empty() ? kernel : stride)) {
      return "Vela (U55/U65): MAX_POOL2D stride must be 1..3";
    }
    if (!kernel.empty() && kernel[0] > 256) return "Vela (U55/U65): MAX_POOL2D kernel_y <= 256";
  }
  return "";
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

namespace {

// The TOSA INT checker plus Vela's constraints for this target, for one node on its own.
SupportDecision base_decision(const compiler::ir::Graph& graph, const compiler::ir::Node& node,
                              const compiler::PartitionContext& context) {
  SupportDecision d = tosa_aot::tosa_supports(graph, node, TosaProfile::Int);
  const compiler::Target* target = context.target;
  if (d.supported && target != nullptr) {
    try {
      const std::string accel = npu_config_of(*target).accelerator;
      if (accel.rfind("ethos-u55", 0) == 0 || accel.rfind("ethos-u65", 0) == 0) {
        std::string why = vela_u55_constraint(graph, node);
        if (!why.empty()) return SupportDecision::no(why);
      }
    } catch (const compiler::CompileError&) {
      // No [npu] table: lower() reports that once, as a compile error.
    }
  }
  return d;
}

// Regions take and give int8 only: a node reading a float value from a node that stays on the
// CPU stays too (e.g. the relu and quantize after a convolution Vela cannot take), and so does
// a dequantize whose reader stays on the CPU.
SupportDecision decide(const compiler::ir::Graph& graph, const compiler::ir::Node& node,
                       const compiler::PartitionContext& context, int depth) {
  SupportDecision d = base_decision(graph, node, context);
  if (!d.supported) return d;
  for (compiler::ir::ValueId v : node.inputs()) {
    const auto& value = graph.value(v);
    if (!value.is_intermediate() || value.spec.dtype != compiler::ir::ScalarType::Float) continue;
    if (depth < 16 && !decide(graph, graph.node(value.producer), context, depth + 1).supported) {
      return SupportDecision::no("reads float '" + value.name +
                                 "' from a node that stays on the CPU (regions take int8)");
    }
  }
  const std::string op = node.op.str();
  if (op.rfind("quantized_decomposed::dequantize_per_", 0) == 0 && !node.outputs.empty()) {
    const compiler::ir::ValueId v = node.outputs[0];
    for (compiler::ir::ValueId out : graph.outputs()) {
      if (out == v) return SupportDecision::no("its float result is a graph output (int8 only)");
    }
    for (compiler::ir::NodeId u : graph.value(v).users) {
      SupportDecision user = base_decision(graph, graph.node(u), context);
      if (!user.supported) {
        return SupportDecision::no("its reader '" + graph.node(u).describe() +
                                   "' stays on the CPU (" + user.reason + ")");
      }
    }
  }
  return d;
}

}  // namespace

SupportDecision EthosUPartitioner::supports(const compiler::ir::Graph& graph,
                                            const compiler::ir::Node& node,
                                            const compiler::PartitionContext& context) const {
  SupportDecision d = decide(graph, node, context, 0);
  if (d.supported) return d;
  if (!quantized_context(graph, node) &&
      tosa_aot::tosa_supports(graph, node, TosaProfile::Fp).supported) {
    return SupportDecision::no(
        "not quantized (the Ethos-U runs int8 only; quantize the model, "
        "e.g. --quantize ethos-u): " +
        d.reason);
  }
  return d;
}

void EthosUPartitioner::prepare(const compiler::ir::Graph& graph,
                                const std::vector<compiler::Region>& regions,
                                const compiler::PartitionContext& context) const {
  try {
    const compiler::Target* target = context.target;
    if (target == nullptr) return;
    const NpuConfig config = npu_config_of(*target);
    std::vector<std::vector<uint8_t>> tosas;
    for (const compiler::Region& region : regions) {
      tosa_aot::TosaLowering tosa = tosa_aot::lower_to_tosa(graph, region.nodes, TosaProfile::Int);
      if (tosa.ok) tosas.push_back(std::move(tosa.tosa));
    }
    prefetch_vela(tosas, config);
  } catch (const std::exception&) {
    // lower() meets the same problem region by region and reports it there.
  }
}

LoweredRegion EthosUPartitioner::lower(const compiler::ir::Graph& graph,
                                       const compiler::Region& region,
                                       const compiler::PartitionContext& context) const {
  const compiler::Target* target = context.target;
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
  } catch (const compiler::CompileError& e) {  // the executor cannot run this graph: a refusal
    return refuse(e.what());
  }
  VelaOutput vela;
  try {
    vela = run_vela(tosa.tosa, config);
  } catch (const compiler::CompileError& e) {
    // Vela refusing the graph is a refusal (the region goes back); Vela missing is the setup.
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
  out.compile_specs.push_back(
      {"pteron.method_bytes", std::vector<uint8_t>(text.begin(), text.end())});
  const VelaEstimate& e = vela.estimate;
  nlohmann::json j = {
      {"runtime", "emulated on the TOSA executor unless the board has an NPU driver"},
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
