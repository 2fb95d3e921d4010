#include "backends/vulkan/aot/vulkan_partitioner.h"

#include <cstdio>
#include <memory>
#include <string>

#include "backends/vulkan/aot/vulkan_lowering.h"
#include "backends/vulkan/aot/vulkan_support.h"
#include "backends/vulkan/runtime/payload_verifier.h"
#include "compiler/ir/work.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {
namespace {

using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Graph;
using compiler::ir::Node;

const bool g_registered = compiler::register_partitioner(
    "vulkan",
    [](const compiler::BackendOptions& options) {
      return std::make_unique<VulkanPartitioner>(options);
    },
    {{"fp16",
      {"off", "on", "storage"},
      "store the regions' tensors and weights as fp16 (inputs and outputs stay fp32); on: "
      "compute in fp16 where the device has shaderFloat16, storage: always in fp32"}});
const bool g_registered_aliases =
    compiler::register_backend_alias("vulkan-fp16", "vulkan:fp16=on") &&
    compiler::register_backend_alias("vulkan-fp16-storage", "vulkan:fp16=storage");

}  // namespace

VulkanPartitioner::VulkanPartitioner(const compiler::BackendOptions& options)
    : Partitioner(options) {
  const auto fp16 = options.find("fp16");
  fp16_ = fp16 != options.end() && fp16->second != "off";
  fp16_arithmetic_ = fp16 == options.end() || fp16->second != "storage";
}

std::string VulkanPartitioner::backend_id() const { return kBackendId; }

SupportDecision VulkanPartitioner::supports(const Graph& graph, const Node& node,
                                            const compiler::PartitionContext&) const {
  const std::string why = vulkan_refusal(graph, node);
  return why.empty() ? SupportDecision::yes() : SupportDecision::no(why);
}

SupportDecision VulkanPartitioner::worth_delegating(const Graph& graph, const Region& region,
                                                    const compiler::PartitionContext&) const {
  const double work = compiler::region_work(graph, region.nodes);
  if (work >= kMinRegionWork) return SupportDecision::yes();
  char why[160];
  snprintf(why, sizeof(why),
           "region of %zu node(s) does %.0f multiply-adds/elements, under the %.0f that repay a "
           "GPU submit and its copies",
           region.nodes.size(), work, kMinRegionWork);
  return SupportDecision::no(why);
}

LoweredRegion VulkanPartitioner::lower(const Graph& graph, const Region& region,
                                       const compiler::PartitionContext&) const {
  LoweredRegion r;
  r.payload = build_payload(graph, region, fp16_, fp16_arithmetic_);
  // A dynamic region's size expressions are bounded by interval arithmetic at load time; one
  // that torch bounds more tightly than that would be refused by the runtime, so it is refused
  // here, with the runtime's reason.
  const fb::Payload* verified = nullptr;
  if (verify_payload(Span<const uint8_t>(r.payload.data(), r.payload.size()), &verified) !=
      Error::Ok) {
    compiler::refuse(std::string("dynamic shape: ") + last_error_message());
  }
  r.ok = true;
  return r;
}

}  // namespace pteron::vulkan
