// The compiler's Vulkan partitioner ("vulkan" in --backends): a support table keyed by op,
// dtype and shape with a reason for every refusal, a boundary-cost rule that gives back
// regions too small to repay a GPU submit, and lowering of a region to a PVK1 payload.
// Option fp16 ("vulkan:fp16=on"): the region's tensors and weights stored as fp16, computed in
// fp16 where the device can; "vulkan:fp16=storage": stored fp16, always computed in fp32.
// The older spellings "vulkan-fp16" and "vulkan-fp16-storage" are aliases of those.
#pragma once

#include <string>

#include "compiler/partition/partitioner.h"

namespace pteron::vulkan {

class VulkanPartitioner final : public compiler::Partitioner {
 public:
  explicit VulkanPartitioner(const compiler::BackendOptions& options = {});
  std::string name() const override { return "vulkan"; }
  std::string backend_id() const override;
  compiler::LoweredRegion lower(const compiler::ir::Graph& graph, const compiler::Region& region,
                                const compiler::PartitionContext& context) const override;
  // Dynamic nodes of the ops the delegate resizes at execute are claimed (supports() refuses
  // the others with the reason); their payloads carry sizes as expressions of the region
  // inputs' dims.
  bool supports_dynamic_shapes() const override { return true; }
  compiler::SupportDecision supports(const compiler::ir::Graph& graph,
                                     const compiler::ir::Node& node,
                                     const compiler::PartitionContext& context) const override;
  compiler::SupportDecision worth_delegating(
      const compiler::ir::Graph& graph, const compiler::Region& region,
      const compiler::PartitionContext& context) const override;

 private:
  bool fp16_;
  bool fp16_arithmetic_;
};

// Regions doing less work than this (compiler::region_work: multiply-adds of matmuls and
// convolutions, elements of other ops) are not worth a submit, a fence wait and two copies.
constexpr double kMinRegionWork = 1 << 16;

}  // namespace pteron::vulkan
