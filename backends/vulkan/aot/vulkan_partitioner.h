// The compiler's Vulkan partitioner ("vulkan" in --backends; "vulkan-fp16" stores the region's
// tensors and weights as fp16 and computes in fp16 where the device can; "vulkan-fp16-storage"
// stores fp16 but always computes in fp32): a support table keyed by op,
// dtype and shape with a reason for every refusal, a boundary-cost rule that gives back
// regions too small to repay a GPU submit, and lowering of a region to a PVK1 payload.
#pragma once

#include <string>

#include "compiler/partition/partitioner.h"

namespace pteron::vulkan {

class VulkanPartitioner final : public compiler::Partitioner {
 public:
  explicit VulkanPartitioner(bool fp16 = false, bool fp16_arithmetic = true)
      : fp16_(fp16), fp16_arithmetic_(fp16_arithmetic) {}
  std::string name() const override {
    return !fp16_ ? "vulkan" : fp16_arithmetic_ ? "vulkan-fp16" : "vulkan-fp16-storage";
  }
  std::string backend_id() const override;
  compiler::LoweredRegion lower(const compiler::ir::Graph& graph,
                                const compiler::Region& region) const override;
  std::string dynamic_shape_refusal() const override {
    return "dynamic shape: the Vulkan delegate records its dispatches for static shapes";
  }
  compiler::SupportDecision supports(const compiler::ir::Graph& graph,
                                     const compiler::ir::Node& node) const override;
  compiler::SupportDecision worth_delegating(const compiler::ir::Graph& graph,
                                             const compiler::Region& region) const override;

 private:
  bool fp16_;
  bool fp16_arithmetic_;
};

// Multiply-adds (matmuls) or elements (others) a region computes: the work the boundary-cost
// rule weighs against the bytes crossing into the delegate.
double region_work(const compiler::ir::Graph& graph, const compiler::Region& region);

// Regions doing less work than this are not worth a submit, a fence wait and two copies.
constexpr double kMinRegionWork = 1 << 16;

}  // namespace pteron::vulkan
