// The compiler's Ethos-U partitioner ("ethos-u", backend id "PteronEthosUBackend").
//
// Claims int8 (PT2E Q/DQ) nodes the TOSA INT profile takes (backends/tosa's checker); a float
// node is refused as "not quantized". A region is lowered to TOSA (backends/tosa lowering), then
// compiled by Vela for the target's [npu] table (accelerator, system config, memory mode); when
// Vela refuses (TOSA input has no CPU fallback, so one unsupported op fails the region) the
// region goes back to the later backends with Vela's reason. The payload carries Vela's output
// and the TOSA form (what the emulated driver runs); Vela's estimate goes in the compile report.
#pragma once

#include <string>
#include <vector>

#include "compiler/partition/partitioner.h"

namespace pteron::ethos_u {

class EthosUPartitioner final : public compiler::Partitioner {
 public:
  std::string name() const override { return "ethos-u"; }
  std::string backend_id() const override { return "PteronEthosUBackend"; }
  std::string dynamic_shape_refusal() const override {
    return "dynamic shape: Vela compiles command streams for static shapes";
  }
  compiler::SupportDecision supports(const compiler::ir::Graph& graph,
                                     const compiler::ir::Node& node,
                                     const compiler::PartitionContext& context) const override;
  compiler::LoweredRegion lower(const compiler::ir::Graph& graph, const compiler::Region& region,
                                const compiler::PartitionContext& context) const override;
  // Lowers every region to TOSA and compiles them all in one Vela process (prefetch_vela), so
  // a program with many regions pays Vela's start-up once; lower() then takes the results.
  void prepare(const compiler::ir::Graph& graph, const std::vector<compiler::Region>& regions,
               const compiler::PartitionContext& context) const override;
};

bool partitioner_registered();

}  // namespace pteron::ethos_u
