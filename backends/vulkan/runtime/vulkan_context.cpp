#include "backends/vulkan/runtime/vulkan_context.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "backends/vulkan/runtime/shader_library.h"

namespace pteron {
namespace vulkan {

const ShaderCode* find_shader(const char* name) {
  for (size_t i = 0; i < kNumShaders; ++i) {
    if (strcmp(kShaders[i].name, name) == 0) return &kShaders[i];
  }
  return nullptr;
}

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    default:
      return "VkResult error";
  }
}

namespace {

struct State {
  std::once_flag once;
  Context* context = nullptr;
  Error error = Error::Ok;
  char message[256] = "";
  char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE] = "";
};

State& state() {
  static State s;
  return s;
}

// Records why there is no context; every later request repeats it.
Error unavailable(State& s, const char* fmt, const char* detail) {
  snprintf(s.message, sizeof(s.message), fmt, detail);
  s.error = Error::NotSupported;
  return s.error;
}

const char* const kFloat16Extension = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;

bool has_device_extension(VkPhysicalDevice d, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(d, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(n);
  if (vkEnumerateDeviceExtensionProperties(d, nullptr, &n, extensions.data()) != VK_SUCCESS) {
    return false;
  }
  for (const VkExtensionProperties& e : extensions) {
    if (strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

Error create(State& s) {
  Context* c = new (std::nothrow) Context();
  if (c == nullptr) return unavailable(s, "Vulkan: %s", "no memory for the device context");
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "pteron";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = vkCreateInstance(&ici, nullptr, &c->instance);
  if (r != VK_SUCCESS) {
    delete c;
    return unavailable(s, "Vulkan: cannot create an instance (%s); is a Vulkan driver installed?",
                       vk_result_name(r));
  }
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(c->instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0) vkEnumeratePhysicalDevices(c->instance, &count, devices.data());
  // The first Vulkan 1.1+ device with a compute queue, discrete and integrated GPUs before
  // others (CPU implementations such as lavapipe come last).
  int best_score = -1;
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d, &props);
    if (props.apiVersion < VK_API_VERSION_1_1) continue;
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, families.data());
    for (uint32_t q = 0; q < nq; ++q) {
      if (!(families[q].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      const int score = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 3
                        : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2
                                                                                     : 1;
      if (score > best_score) {
        best_score = score;
        c->physical_device = d;
        c->queue_family = q;
        c->properties = props;
        c->timestamp_bits = families[q].timestampValidBits;
      }
      break;
    }
  }
  if (c->physical_device == VK_NULL_HANDLE) {
    vkDestroyInstance(c->instance, nullptr);
    delete c;
    return unavailable(s, "Vulkan: %s",
                       "no Vulkan 1.1+ device with a compute queue (install a driver, e.g. "
                       "mesa-vulkan-drivers for lavapipe)");
  }
  vkGetPhysicalDeviceMemoryProperties(c->physical_device, &c->memory);
  c->timestamp_period = c->properties.limits.timestampPeriod;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = c->queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  // 16-bit storage (Vulkan 1.1 core feature struct) for fp16 regions, where present, and
  // shaderFloat16 for their fp16 arithmetic. The instance asks for Vulkan 1.1, so shaderFloat16
  // comes through its extension (core only from 1.2), queried and enabled only when listed.
  const bool has_float16_ext = has_device_extension(c->physical_device, kFloat16Extension);
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16_arith{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDevice16BitStorageFeatures f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  if (has_float16_ext) f16.pNext = &f16_arith;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f16;
  vkGetPhysicalDeviceFeatures2(c->physical_device, &features);
  c->storage16 = f16.storageBuffer16BitAccess == VK_TRUE;
  // The `_f16a` shaders keep fp16 in storage buffers too, so they need both features.
  c->float16_arithmetic = c->storage16 && has_float16_ext && f16_arith.shaderFloat16 == VK_TRUE;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR enable_arith{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  enable_arith.shaderFloat16 = VK_TRUE;
  VkPhysicalDevice16BitStorageFeatures enable16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  enable16.storageBuffer16BitAccess = c->storage16 ? VK_TRUE : VK_FALSE;
  if (c->float16_arithmetic) enable16.pNext = &enable_arith;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &enable16;
  if (c->float16_arithmetic) {
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &kFloat16Extension;
  }
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  r = vkCreateDevice(c->physical_device, &dci, nullptr, &c->device);
  if (r != VK_SUCCESS) {
    vkDestroyInstance(c->instance, nullptr);
    delete c;
    return unavailable(s, "Vulkan: cannot create a device (%s)", vk_result_name(r));
  }
  vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);
  VkDescriptorSetLayoutBinding bindings[kNumBindings];
  for (uint32_t b = 0; b < kNumBindings; ++b) {
    bindings[b] = VkDescriptorSetLayoutBinding{b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                               VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  lci.bindingCount = kNumBindings;
  lci.pBindings = bindings;
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &c->set_layout;
  pci.pushConstantRangeCount = 1;
  pci.pPushConstantRanges = &push;
  if (vkCreateDescriptorSetLayout(c->device, &lci, nullptr, &c->set_layout) != VK_SUCCESS ||
      vkCreatePipelineLayout(c->device, &pci, nullptr, &c->pipeline_layout) != VK_SUCCESS) {
    return unavailable(s, "Vulkan: %s", "cannot create the pipeline layout");
  }
  snprintf(s.device_name, sizeof(s.device_name), "%s", c->properties.deviceName);
  s.context = c;  // lives until the process ends: delegates of any program share it
  return Error::Ok;
}

struct CachedPipeline {
  const char* name;
  VkPipeline pipeline;
};
std::vector<CachedPipeline>& pipeline_cache() {
  static std::vector<CachedPipeline> cache;
  return cache;
}

}  // namespace

Result<Context*> shared_context() {
  State& s = state();
  std::call_once(s.once, [&s] { create(s); });
  if (s.context == nullptr) return fail(Error::NotSupported, "%s", s.message);
  return s.context;
}

const char* device_name() { return state().device_name; }

int32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
  int32_t fallback = -1;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = memory.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return static_cast<int32_t>(i);
    if (fallback < 0) fallback = static_cast<int32_t>(i);
  }
  return fallback;
}

Result<VkPipeline> Context::pipeline(const char* name) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const CachedPipeline& p : pipeline_cache()) {
    if (strcmp(p.name, name) == 0) return p.pipeline;
  }
  const ShaderCode* code = find_shader(name);
  if (code == nullptr) return fail(Error::Internal, "Vulkan: no shader named %s", name);
  VkShaderModuleCreateInfo sci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sci.codeSize = code->num_words * 4;
  sci.pCode = code->words;
  VkShaderModule module;
  VkResult r = vkCreateShaderModule(device, &sci, nullptr, &module);
  if (r != VK_SUCCESS) {
    return fail(Error::DelegateFailed, "Vulkan: shader %s does not load (%s)", name,
                vk_result_name(r));
  }
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage = VkPipelineShaderStageCreateInfo{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = module;
  cci.stage.pName = "main";
  cci.layout = pipeline_layout;
  VkPipeline pipeline;
  r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cci, nullptr, &pipeline);
  vkDestroyShaderModule(device, module, nullptr);
  if (r != VK_SUCCESS) {
    return fail(Error::DelegateFailed, "Vulkan: pipeline for shader %s fails (%s)", name,
                vk_result_name(r));
  }
  pipeline_cache().push_back(CachedPipeline{code->name, pipeline});
  return pipeline;
}

}  // namespace vulkan
}  // namespace pteron
