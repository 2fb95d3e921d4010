// One Vulkan device context per process, shared by every region of every program: instance,
// the chosen physical device (any Vulkan 1.1+ device with a compute queue), logical device,
// queue, the one descriptor-set and pipeline layout every shader uses, and compute pipelines
// cached by shader name. Created on first use; a missing or unsuitable device is remembered
// with its message.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>

#include "runtime/core/result.h"

namespace pteron {
namespace vulkan {

// Storage-buffer bindings per shader (0: output, 1..3: inputs) and push-constant bytes.
constexpr uint32_t kNumBindings = 4;
constexpr uint32_t kPushConstantBytes = 128;

struct Context {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  // storageBuffer16BitAccess, enabled when the device has it: the `_f16` shader variants (fp16
  // regions) need it.
  bool storage16 = false;
  // shaderFloat16 (VK_KHR_shader_float16_int8, enabled when the device has it): fp16 regions
  // then run the `_f16a` shader variants, fp16 arithmetic (shaders/common.glsl).
  bool float16_arithmetic = false;

  // Valid bits of the compute queue's timestamps (0: none) and ns per timestamp tick: traced
  // runs time each dispatch with them.
  uint32_t timestamp_bits = 0;
  float timestamp_period = 0.0f;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  // Guards the queue (externally synchronised in Vulkan) and the pipeline cache.
  std::mutex mutex;

  // The cached pipeline for shader `name`, created on first request.
  Result<VkPipeline> pipeline(const char* name);
  // A memory type index with `required` flags among `type_bits`, preferring `preferred`; -1
  // when none.
  int32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                      VkMemoryPropertyFlags preferred) const;
};

// The process-wide context, or the error that made it unavailable (NotSupported with a message
// saying what is missing). Thread-safe.
Result<Context*> shared_context();

// "llvmpipe (LLVM 15.0.6, 256 bits)" or "" when no context.
const char* device_name();

const char* vk_result_name(VkResult r);

}  // namespace vulkan
}  // namespace pteron
