// The compiler's VGF partitioner ("vgf"): claims the fp32 nodes the TOSA FP profile takes
// (backends/tosa's support checker, whose reasons it reports), lowers each region to a TOSA
// graph (backends/tosa), converts it with the ML SDK model converter and packs the .vgf with
// the region's I/O layout into the delegate's payload. A region the converter rejects goes back
// to the later partitioners with the converter's message.
#include <cstdio>
#include <memory>
#include <string>

#include "backends/tosa/aot/tosa_lowering.h"
#include "backends/vgf/aot/model_converter.h"
#include "backends/vgf/aot/payload_builder.h"
#include "backends/vgf/runtime/vgf_backend.h"
#include "compiler/ir/work.h"
#include "compiler/partition/registry.h"

namespace pteron::vgf {
namespace {

using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::ValueId;

// A region must do at least this many multiply-adds (matmul/conv) or elements (other ops) to
// repay a graph dispatch, its submit and the host copies (the same bar as backends/vulkan).
constexpr double kMinRegionWork = 1 << 16;

class VgfPartitioner final : public compiler::Partitioner {
 public:
  std::string name() const override { return "vgf"; }
  std::string backend_id() const override { return kBackendId; }

  std::string dynamic_shape_refusal() const override {
    return "dynamic shape: VGF graphs (TOSA) have static shapes";
  }
  SupportDecision supports(const Graph& graph, const Node& node,
                           const compiler::PartitionContext&) const override {
    for (ValueId v : node.outputs) {
      if (graph.value(v).spec.dtype != ScalarType::Float) {
        return SupportDecision::no("an output is not fp32 (the VGF path runs the TOSA FP profile)");
      }
    }
    return tosa_aot::tosa_supports(graph, node, tosa_aot::TosaProfile::Fp);
  }

  SupportDecision worth_delegating(const Graph& graph, const Region& region,
                                   const compiler::PartitionContext&) const override {
    const double work = compiler::region_work(graph, region.nodes);
    if (work >= kMinRegionWork) return SupportDecision::yes();
    char why[160];
    snprintf(why, sizeof(why),
             "region of %zu node(s) does %.0f multiply-adds/elements, under the %.0f that repay a "
             "data-graph dispatch and its copies",
             region.nodes.size(), work, kMinRegionWork);
    return SupportDecision::no(why);
  }

  LoweredRegion lower(const Graph& graph, const Region& region,
                      const compiler::PartitionContext&) const override {
    LoweredRegion r;
    const tosa_aot::TosaLowering t =
        tosa_aot::lower_to_tosa(graph, region.nodes, tosa_aot::TosaProfile::Fp);
    if (!t.ok) {
      r.reason = "TOSA lowering: " + t.reason;
      return r;
    }
    std::vector<uint8_t> vgf;
    if (!convert_tosa_to_vgf(t.tosa, &vgf, &r.reason)) return r;
    // The delegate call passes the region's inputs then outputs in Region order; each names
    // the TOSA (and so VGF) input or output it is.
    std::vector<IoDesc> inputs, outputs;
    for (int dir = 0; dir < 2; ++dir) {
      const auto& values = dir == 0 ? region.inputs : region.outputs;
      const auto& tosa_io = dir == 0 ? t.inputs : t.outputs;
      auto& list = dir == 0 ? inputs : outputs;
      auto& dim_orders = dir == 0 ? r.input_dim_orders : r.output_dim_orders;
      for (ValueId v : values) {
        size_t k = 0;
        while (k < tosa_io.size() && tosa_io[k].value != v) ++k;
        const auto& spec = graph.value(v).spec;
        if (k == tosa_io.size() || spec.rank() > kMaxDims) {
          r.reason = "TOSA lowering: region value " + graph.value(v).name +
                     " is not a graph input/output of the TOSA graph (or has rank > 6)";
          return r;
        }
        IoDesc io{};
        io.dtype = static_cast<uint32_t>(spec.dtype);
        io.rank = static_cast<uint32_t>(spec.rank());
        std::vector<uint8_t> order = tosa_io[k].dim_order;
        if (order.size() != spec.rank()) order = compiler::ir::identity_dim_order(spec.rank());
        for (size_t d = 0; d < spec.rank(); ++d) {
          io.dims[d] = spec.sizes[d];
          io.dim_order[d] = order[d];
        }
        io.vgf_index = static_cast<uint32_t>(k);
        list.push_back(io);
        dim_orders.push_back(order);
      }
    }
    std::string error;
    std::vector<IoDesc> vgf_in, vgf_out;
    if (!io_from_vgf(vgf, &vgf_in, &vgf_out, &error)) {
      r.reason = error;
      return r;
    }
    if (vgf_in.size() != inputs.size() || vgf_out.size() != outputs.size()) {
      r.reason = "VGF: the converted graph has " + std::to_string(vgf_in.size()) + " inputs / " +
                 std::to_string(vgf_out.size()) + " outputs, the region " +
                 std::to_string(inputs.size()) + " / " + std::to_string(outputs.size());
      return r;
    }
    r.payload = build_payload(vgf, inputs, outputs);
    r.ok = true;
    return r;
  }
};

const bool g_registered = compiler::register_partitioner(
    "vgf", [](const compiler::BackendOptions&) { return std::make_unique<VgfPartitioner>(); });

}  // namespace
}  // namespace pteron::vgf
