// What init() prepares: the precision, one device buffer for every tensor and one staging
// buffer for the externals, the constants uploaded, every dispatch with its pipeline and
// descriptor set, and the recorded command buffer.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

bool env_is(const char* name, const char* value) {
  const char* v = getenv(name);
  return v != nullptr && strcmp(v, value) == 0;
}

Error make_buffer(Context& c, uint64_t size, VkBufferUsageFlags usage,
                  VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred, VkBuffer* buffer,
                  VkDeviceMemory* memory) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(c.device, &bci, nullptr, buffer);
  if (r != VK_SUCCESS) return vk_fail("vkCreateBuffer", r);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(c.device, *buffer, &req);
  const int32_t type = c.memory_type(req.memoryTypeBits, required, preferred);
  if (type < 0) {
    return fail(Error::NotSupported, "Vulkan delegate: device %s has no suitable memory type",
                c.properties.deviceName);
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vkAllocateMemory(c.device, &mai, nullptr, memory);
  if (r != VK_SUCCESS) return vk_fail("vkAllocateMemory", r);
  r = vkBindBufferMemory(c.device, *buffer, *memory, 0);
  if (r != VK_SUCCESS) return vk_fail("vkBindBufferMemory", r);
  return Error::Ok;
}

// Lays every tensor out in one device buffer and the externals in one staging buffer.
Error plan_memory(Delegate& d, uint64_t* staging_bytes, uint64_t* constant_bytes) {
  const VkPhysicalDeviceLimits& lim = d.ctx->properties.limits;
  const uint64_t align =
      lim.minStorageBufferOffsetAlignment > 16 ? lim.minStorageBufferOffsetAlignment : 16;
  const auto& ts = *d.payload->tensors();
  d.offsets.resize(ts.size());
  // A reshape's output is its input's storage (same bytes, new sizes): no copy, no dispatch.
  // Every tensor is written once (verified) and nothing is reused, so sharing is safe.
  d.alias.resize(ts.size());
  for (uint32_t i = 0; i < ts.size(); ++i) d.alias[i] = i;
  for (const fb::Node* node : *d.payload->nodes()) {
    if (node->op() == fb::OpType::Reshape) {
      d.alias[node->outputs()->Get(0)] = d.alias[node->inputs()->Get(0)];  // inputs come first
    }
  }
  uint64_t offset = 0, staging = 0, constants = 0;
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    const uint64_t bytes = nbytes(t);
    if (bytes > lim.maxStorageBufferRange) {
      return fail(Error::NotSupported,
                  "Vulkan delegate: tensor %u (%llu bytes) exceeds the device's storage buffer "
                  "range (%u bytes)",
                  i, static_cast<unsigned long long>(bytes), lim.maxStorageBufferRange);
    }
    if (d.alias[i] == i) {
      d.offsets[i] = offset;
      offset = align_up(offset + bytes, align);
    }
    if (t.external() != fb::ExternalKind::Internal) {
      const bool input = t.external() == fb::ExternalKind::Input;
      External e{i,     t.arg_index(),
                 input, staging,
                 bytes, t.dims() ? t.dims()->size() : 0,
                 {},    t.dtype() == fb::DataType::Int64 ? ScalarType::Long : ScalarType::Float};
      for (uint32_t k = 0; k < e.rank; ++k) e.dims[k] = t.dims()->Get(k);
      d.externals.push_back(e);
      staging = align_up(staging + bytes, 16);
    }
    if (t.is_constant()) constants = align_up(constants + bytes, 16);
  }
  for (uint32_t i = 0; i < ts.size(); ++i) d.offsets[i] = d.offsets[d.alias[i]];
  d.num_args = static_cast<uint32_t>(d.externals.size());
  d.dummy_offset = offset;
  d.device_bytes = offset + align;
  *staging_bytes = staging > constants ? staging : constants;
  if (*staging_bytes == 0) *staging_bytes = 16;
  *constant_bytes = constants;
  return Error::Ok;
}

// Runs `record` on a one-time command buffer and waits for it (constant upload at init).
template <typename F>
Error submit_and_wait(Delegate& d, F record) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(d.commands, &bi);
  if (r != VK_SUCCESS) return vk_fail("vkBeginCommandBuffer", r);
  record(d.commands);
  r = vkEndCommandBuffer(d.commands);
  if (r != VK_SUCCESS) return vk_fail("vkEndCommandBuffer", r);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &d.commands;
  {
    std::lock_guard<std::mutex> lock(d.ctx->mutex);
    r = vkQueueSubmit(d.ctx->queue, 1, &si, d.fence);
  }
  if (r != VK_SUCCESS) return vk_fail("vkQueueSubmit", r);
  r = vkWaitForFences(d.ctx->device, 1, &d.fence, VK_TRUE, std::numeric_limits<uint64_t>::max());
  if (r != VK_SUCCESS) return vk_fail("vkWaitForFences", r);
  vkResetFences(d.ctx->device, 1, &d.fence);
  return Error::Ok;
}

// An fp16 region computes in fp16 on a GPU with shaderFloat16 unless told not to. CPU devices
// (lavapipe) have the feature but no fp16 ALU: every half operation is widened to fp32 and
// rounded back, which made the models slower there than fp16 storage in most runs
// (mobilenet-v2 1.3x to 2x; backends/vulkan/README.md), so they get the arithmetic variants
// only when asked.
Error choose_precision(Delegate& d) {
  bool f16 = false;
  for (const fb::Tensor* t : *d.payload->tensors()) f16 |= t->dtype() == fb::DataType::Float16;
  Fp16Arithmetic mode = g_fp16_arithmetic.load();
  if (mode == Fp16Arithmetic::Auto && env_is("PTERON_VULKAN_FP16_ARITH", "0")) {
    mode = Fp16Arithmetic::StorageOnly;
  }
  if (mode == Fp16Arithmetic::Auto && env_is("PTERON_VULKAN_FP16_ARITH", "1")) {
    mode = Fp16Arithmetic::Arithmetic;
  }
  const bool compiled_storage_only = !d.payload->fp16_arithmetic();  // vulkan:fp16=storage
  const bool cpu = d.ctx->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const bool arith = d.ctx->float16_arithmetic && !compiled_storage_only &&
                     (mode == Fp16Arithmetic::Arithmetic || (mode == Fp16Arithmetic::Auto && !cpu));
  d.precision = !f16 ? kPrecisionFp32 : arith ? kPrecisionFp16Arith : kPrecisionFp16Storage;
  if (env_is("PTERON_VULKAN_LOG", "1")) {
    fprintf(stderr, "pteron vulkan: %u-node region on %s: %s%s\n", d.payload->nodes()->size(),
            d.ctx->properties.deviceName, d.precision,
            !f16 || arith                ? ""
            : compiled_storage_only      ? " (compiled with vulkan:fp16=storage)"
            : !d.ctx->float16_arithmetic ? " (the device has no shaderFloat16)"
            : mode == Fp16Arithmetic::StorageOnly
                ? " (asked for)"
                : " (a CPU device, where fp16 arithmetic is "
                  "slower; PTERON_VULKAN_FP16_ARITH=1 forces it)");
  }
  return Error::Ok;
}

}  // namespace

Error vk_fail(const char* what, VkResult r) {
  return fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                  ? Error::OutOfMemory
                  : Error::DelegateFailed,
              "Vulkan delegate: %s failed (%s)", what, vk_result_name(r));
}

Error allocate_commands(const Context& c, VkCommandPool pool, VkCommandBuffer* out) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  const VkResult r = vkAllocateCommandBuffers(c.device, &cai, out);
  return r == VK_SUCCESS ? Error::Ok : vk_fail("vkAllocateCommandBuffers", r);
}

Error resolve_pipeline(Delegate& d, Dispatch& dp) {
  char name[40];
  const bool arith = d.precision == kPrecisionFp16Arith;
  snprintf(name, sizeof(name), "%s%s", dp.shader, dp.f16 ? (arith ? "_f16a" : "_f16") : "");
  Result<VkPipeline> pipeline = d.ctx->pipeline(name);
  if (!pipeline.ok()) return pipeline.error();
  dp.pipeline = *pipeline;
  return Error::Ok;
}

Error build(Delegate& d, Span<const uint8_t> processed) {
  Context& c = *d.ctx;
  const fb::Payload& p = *d.payload;
  for (const fb::Tensor* t : *p.tensors()) {
    if (t->dtype() == fb::DataType::Float16 && !c.storage16) {
      return fail(Error::NotSupported,
                  "Vulkan delegate: this region stores fp16 but device %s has no 16-bit storage "
                  "buffers (compile it with `vulkan` instead of `vulkan:fp16=on`)",
                  c.properties.deviceName);
    }
  }
  PTERON_TRY(choose_precision(d));
  uint64_t staging_bytes = 0, constant_bytes = 0;
  PTERON_TRY(plan_memory(d, &staging_bytes, &constant_bytes));
  PTERON_TRY(make_buffer(c, d.device_bytes,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &d.device_buffer,
                         &d.device_memory));
  PTERON_TRY(make_buffer(c, staging_bytes,
                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &d.staging_buffer, &d.staging_memory));
  void* mapped = nullptr;
  VkResult r = vkMapMemory(c.device, d.staging_memory, 0, VK_WHOLE_SIZE, 0, &mapped);
  if (r != VK_SUCCESS) return vk_fail("vkMapMemory", r);
  d.staging = static_cast<uint8_t*>(mapped);

  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = c.queue_family;
  r = vkCreateCommandPool(c.device, &cpi, nullptr, &d.command_pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateCommandPool", r);
  PTERON_TRY(allocate_commands(c, d.command_pool, &d.commands));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(c.device, &fci, nullptr, &d.fence);
  if (r != VK_SUCCESS) return vk_fail("vkCreateFence", r);

  // Constants: staged once, copied to the device buffer, then the staging memory is reused
  // for inputs and outputs.
  if (constant_bytes > 0) {
    std::vector<VkBufferCopy> copies;
    uint64_t at = 0;
    const uint8_t* blob = processed.data() + p.constant_data_offset();
    for (uint32_t i = 0; i < p.tensors()->size(); ++i) {
      const fb::Tensor& t = *p.tensors()->Get(i);
      if (!t.is_constant()) continue;
      memcpy(d.staging + at, blob + t.constant_offset(), t.constant_size());
      copies.push_back(VkBufferCopy{at, d.offsets[i], t.constant_size()});
      at = align_up(at + t.constant_size(), 16);
    }
    PTERON_TRY(submit_and_wait(d, [&](VkCommandBuffer cb) {
      vkCmdCopyBuffer(cb, d.staging_buffer, d.device_buffer, static_cast<uint32_t>(copies.size()),
                      copies.data());
    }));
  }

  const uint32_t num_nodes = p.nodes()->size();
  for (uint32_t n = 0; n < num_nodes; ++n) PTERON_TRY(plan_node(d, n, *p.nodes()->Get(n)));
  const uint32_t num_sets = d.dispatches.empty() ? 1 : static_cast<uint32_t>(d.dispatches.size());
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, num_sets * kNumBindings};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = num_sets;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  r = vkCreateDescriptorPool(c.device, &dpi, nullptr, &d.pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateDescriptorPool", r);
  const uint64_t dummy = d.dummy_offset;
  for (Dispatch& dp : d.dispatches) {
    PTERON_TRY(resolve_pipeline(d, dp));
    VkDescriptorSetAllocateInfo sai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    sai.descriptorPool = d.pool;
    sai.descriptorSetCount = 1;
    sai.pSetLayouts = &c.set_layout;
    r = vkAllocateDescriptorSets(c.device, &sai, &dp.set);
    if (r != VK_SUCCESS) return vk_fail("vkAllocateDescriptorSets", r);
    VkDescriptorBufferInfo infos[kNumBindings];
    VkWriteDescriptorSet writes[kNumBindings];
    for (uint32_t b = 0; b < kNumBindings; ++b) {
      const int64_t t = dp.bind[b];
      infos[b] = t < 0 ? VkDescriptorBufferInfo{d.device_buffer, dummy, 16}
                       : VkDescriptorBufferInfo{d.device_buffer, d.offsets[t],
                                                nbytes(tensor(d, static_cast<uint32_t>(t)))};
      writes[b] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = dp.set;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(c.device, kNumBindings, writes, 0, nullptr);
  }
  return record(d, d.commands, VK_NULL_HANDLE);
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
