#include "backends/vgf/runtime/vgf_context.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "runtime/host/self_location.h"

namespace pteron {
namespace vgf {

int32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required) const {
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & required) == required) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

namespace {

constexpr const char* kGraphLayer = "VK_LAYER_ML_Graph_Emulation";
constexpr const char* kTensorLayer = "VK_LAYER_ML_Tensor_Emulation";

struct State {
  std::once_flag once;
  Context* context = nullptr;
  char message[512] = "";
};

State& state() {
  static State s;
  return s;
}

Error unavailable(State& s, const char* fmt, const char* a, const char* b = "") {
  snprintf(s.message, sizeof(s.message), fmt, a, b);
  return Error::NotSupported;
}

bool has_layer(const std::vector<VkLayerProperties>& layers, const char* name) {
  for (const VkLayerProperties& l : layers) {
    if (strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

bool has_extension(VkPhysicalDevice d, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(d, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  if (n > 0) vkEnumerateDeviceExtensionProperties(d, nullptr, &n, exts.data());
  for (const VkExtensionProperties& e : exts) {
    if (strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

template <typename T>
bool load(VkDevice device, const char* name, T* fn) {
  *fn = reinterpret_cast<T>(vkGetDeviceProcAddr(device, name));
  return *fn != nullptr;
}

void destroy(Context* c) {
  if (c->device) vkDestroyDevice(c->device, nullptr);
  if (c->instance) vkDestroyInstance(c->instance, nullptr);
  delete c;
}

// The emulation layers pteron ships (backends/vgf/CMakeLists.txt): installed at
// share/pteron/vulkan/explicit_layer.d, in the build tree at build/vgf_layers. "" if absent.
std::string shipped_layer_dir() {
  return host::find_near_self({"share/pteron/vulkan/explicit_layer.d",
                               "pteron/share/pteron/vulkan/explicit_layer.d", "vgf_layers"});
}

// Points the Vulkan loader at the shipped layers for this process, before the instance is
// created, unless the user chose layers (VK_LAYER_PATH or VK_INSTANCE_LAYERS set). The instance
// then enables the two layers by name (create()); other Vulkan instances are not affected.
void use_shipped_layers() {
  if (getenv("VK_LAYER_PATH") != nullptr || getenv("VK_INSTANCE_LAYERS") != nullptr) return;
  const std::string dir = shipped_layer_dir();
  if (dir.empty()) return;
  setenv("VK_LAYER_PATH", dir.c_str(), 0);
  const char* log = getenv("PTERON_VULKAN_LOG");
  if (log != nullptr && strcmp(log, "1") == 0) {
    fprintf(stderr, "pteron: VGF: using the ML emulation layers pteron ships (VK_LAYER_PATH=%s)\n",
            dir.c_str());
  }
}

Error create(State& s) {
  Context* c = new (std::nothrow) Context();
  if (c == nullptr) return unavailable(s, "VGF: %s%s", "no memory for the device context");
  use_shipped_layers();

  // Enable the emulation layers when the loader sees them and the environment did not already.
  uint32_t nl = 0;
  vkEnumerateInstanceLayerProperties(&nl, nullptr);
  std::vector<VkLayerProperties> layers(nl);
  if (nl > 0) vkEnumerateInstanceLayerProperties(&nl, layers.data());
  const char* enabled[2];
  uint32_t num_enabled = 0;
  if (has_layer(layers, kGraphLayer) && has_layer(layers, kTensorLayer)) {
    enabled[num_enabled++] = kGraphLayer;
    enabled[num_enabled++] = kTensorLayer;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "pteron-vgf";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = num_enabled;
  ici.ppEnabledLayerNames = enabled;
  VkResult r = vkCreateInstance(&ici, nullptr, &c->instance);
  if (r != VK_SUCCESS) {
    destroy(c);
    return unavailable(s,
                       "VGF: cannot create a Vulkan instance (%s)%s; is a Vulkan driver installed?",
                       vk_result_name(r));
  }
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(c->instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0) vkEnumeratePhysicalDevices(c->instance, &count, devices.data());
  char first_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE] = "";
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(d, &props);
    if (first_name[0] == '\0') snprintf(first_name, sizeof(first_name), "%s", props.deviceName);
    if (props.apiVersion < VK_API_VERSION_1_3) continue;
    if (!has_extension(d, VK_ARM_TENSORS_EXTENSION_NAME) ||
        !has_extension(d, VK_ARM_DATA_GRAPH_EXTENSION_NAME)) {
      continue;
    }
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, families.data());
    // A data-graph queue, else a compute queue (the emulation layer runs graphs as compute).
    int32_t family = -1;
    for (uint32_t q = 0; q < nq && family < 0; ++q) {
      if (families[q].queueFlags & VK_QUEUE_DATA_GRAPH_BIT_ARM) family = static_cast<int32_t>(q);
    }
    for (uint32_t q = 0; q < nq && family < 0; ++q) {
      if (families[q].queueFlags & VK_QUEUE_COMPUTE_BIT) family = static_cast<int32_t>(q);
    }
    if (family < 0) continue;
    c->physical_device = d;
    c->queue_family = static_cast<uint32_t>(family);
    c->properties = props;
    break;
  }
  if (c->physical_device == VK_NULL_HANDLE) {
    destroy(c);
    if (count == 0) {
      return unavailable(s, "VGF: %s%s",
                         "no Vulkan device (install a driver, e.g. mesa-vulkan-drivers for "
                         "lavapipe)");
    }
    const std::string shipped = shipped_layer_dir();
    return unavailable(s,
                       "VK_ARM_data_graph not available on %s: enable Arm's ML emulation layer "
                       "(VK_LAYER_PATH=%s)",
                       first_name,
                       shipped.empty() ? "<ai-ml-emulation-layer-for-vulkan>/deploy/share/vulkan/"
                                         "explicit_layer.d: none shipped next to pteron"
                                       : shipped.c_str());
  }
  vkGetPhysicalDeviceMemoryProperties(c->physical_device, &c->memory);

  // Features the graph needs: tensors, data graphs from shader modules, and the Vulkan 1.3
  // core features the converter's SPIR-V relies on.
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.vulkanMemoryModel = VK_TRUE;
  f12.shaderInt8 = VK_TRUE;
  f12.storageBuffer8BitAccess = VK_TRUE;
  f12.pNext = &f13;
  VkPhysicalDeviceTensorFeaturesARM tensor_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TENSOR_FEATURES_ARM};
  tensor_features.tensors = VK_TRUE;
  tensor_features.tensorNonPacked = VK_TRUE;
  tensor_features.shaderTensorAccess = VK_TRUE;
  tensor_features.pNext = &f12;
  VkPhysicalDeviceDataGraphFeaturesARM graph_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DATA_GRAPH_FEATURES_ARM};
  graph_features.dataGraph = VK_TRUE;
  graph_features.dataGraphShaderModule = VK_TRUE;
  graph_features.pNext = &tensor_features;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderInt16 = VK_TRUE;
  features.features.shaderInt64 = VK_TRUE;
  features.pNext = &graph_features;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = c->queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  const char* extensions[] = {VK_ARM_TENSORS_EXTENSION_NAME, VK_ARM_DATA_GRAPH_EXTENSION_NAME};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 2;
  dci.ppEnabledExtensionNames = extensions;
  r = vkCreateDevice(c->physical_device, &dci, nullptr, &c->device);
  if (r != VK_SUCCESS) {
    snprintf(first_name, sizeof(first_name), "%s", c->properties.deviceName);
    destroy(c);
    return unavailable(s, "VGF: cannot create a data-graph device on %s (%s)", first_name,
                       vk_result_name(r));
  }
  vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);
  VkDevice d = c->device;
  const bool ok = load(d, "vkCreateTensorARM", &c->create_tensor) &&
                  load(d, "vkDestroyTensorARM", &c->destroy_tensor) &&
                  load(d, "vkCreateTensorViewARM", &c->create_tensor_view) &&
                  load(d, "vkDestroyTensorViewARM", &c->destroy_tensor_view) &&
                  load(d, "vkGetTensorMemoryRequirementsARM", &c->tensor_memory_requirements) &&
                  load(d, "vkBindTensorMemoryARM", &c->bind_tensor_memory) &&
                  load(d, "vkCreateDataGraphPipelinesARM", &c->create_data_graph_pipelines) &&
                  load(d, "vkCreateDataGraphPipelineSessionARM", &c->create_session) &&
                  load(d, "vkGetDataGraphPipelineSessionBindPointRequirementsARM",
                       &c->session_bind_point_requirements) &&
                  load(d, "vkGetDataGraphPipelineSessionMemoryRequirementsARM",
                       &c->session_memory_requirements) &&
                  load(d, "vkBindDataGraphPipelineSessionMemoryARM", &c->bind_session_memory) &&
                  load(d, "vkDestroyDataGraphPipelineSessionARM", &c->destroy_session) &&
                  load(d, "vkCmdDispatchDataGraphARM", &c->cmd_dispatch_data_graph);
  if (!ok) {
    destroy(c);
    return unavailable(s, "VGF: %s%s",
                       "the device lists VK_ARM_data_graph but does not provide its entry points");
  }
  s.context = c;
  return Error::Ok;
}

}  // namespace

Result<Context*> shared_context() {
  State& s = state();
  std::call_once(s.once, [&s] { create(s); });
  if (s.context == nullptr) return fail(Error::NotSupported, "%s", s.message);
  return s.context;
}

}  // namespace vgf
}  // namespace pteron
