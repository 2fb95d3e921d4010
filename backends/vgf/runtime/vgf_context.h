// The VGF delegate's Vulkan context: one per process, created on first use. It needs a device
// with VK_ARM_tensors and VK_ARM_data_graph (on this machine: lavapipe under Arm's ML emulation
// layer), which the compute-shader delegate's context (backends/vulkan) does not enable, so it
// is a separate instance/device. When the emulation layers are installed but not enabled in the
// environment, the context enables them itself. A missing device or extension is remembered
// with a one-line message saying how to get it.
#pragma once

#include <cstdint>
#include <mutex>

#include "backends/vgf/runtime/vk_arm.h"
#include "backends/vulkan/runtime/vulkan_context.h"
#include "runtime/core/result.h"

namespace pteron {
namespace vgf {

struct Context {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  std::mutex mutex;  // guards the queue (externally synchronised in Vulkan)

  // Extension entry points (from vkGetDeviceProcAddr).
  PFN_vkCreateTensorARM create_tensor = nullptr;
  PFN_vkDestroyTensorARM destroy_tensor = nullptr;
  PFN_vkCreateTensorViewARM create_tensor_view = nullptr;
  PFN_vkDestroyTensorViewARM destroy_tensor_view = nullptr;
  PFN_vkGetTensorMemoryRequirementsARM tensor_memory_requirements = nullptr;
  PFN_vkBindTensorMemoryARM bind_tensor_memory = nullptr;
  PFN_vkCreateDataGraphPipelinesARM create_data_graph_pipelines = nullptr;
  PFN_vkCreateDataGraphPipelineSessionARM create_session = nullptr;
  PFN_vkGetDataGraphPipelineSessionBindPointRequirementsARM session_bind_point_requirements =
      nullptr;
  PFN_vkGetDataGraphPipelineSessionMemoryRequirementsARM session_memory_requirements = nullptr;
  PFN_vkBindDataGraphPipelineSessionMemoryARM bind_session_memory = nullptr;
  PFN_vkDestroyDataGraphPipelineSessionARM destroy_session = nullptr;
  PFN_vkCmdDispatchDataGraphARM cmd_dispatch_data_graph = nullptr;

  // A memory type index with `required` flags among `type_bits`; -1 when none.
  int32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required) const;
};

// The process-wide context, or NotSupported with the message saying what is missing.
Result<Context*> shared_context();

using vulkan::vk_result_name;  // one VkResult naming for both Vulkan delegates

}  // namespace vgf
}  // namespace pteron
