// The recorded command buffer (input copies, every dispatch with a barrier after it, output
// copies), its timestamped twin for traced runs, and the per-dispatch trace events.
#include <vector>

#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
             VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

}  // namespace

Error record(Delegate& d, VkCommandBuffer cb, VkQueryPool queries) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult r = vkResetCommandBuffer(cb, 0);
  if (r != VK_SUCCESS) return vk_fail("vkResetCommandBuffer", r);
  r = vkBeginCommandBuffer(cb, &bi);
  if (r != VK_SUCCESS) return vk_fail("vkBeginCommandBuffer", r);
  const uint32_t num_queries = static_cast<uint32_t>(d.dispatches.size()) + 1;
  if (queries) vkCmdResetQueryPool(cb, queries, 0, num_queries);
  std::vector<VkBufferCopy> copies;
  for (const External& e : d.externals) {
    if (e.is_input) copies.push_back(VkBufferCopy{e.staging_offset, d.offsets[e.tensor], e.nbytes});
  }
  barrier(cb, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  if (!copies.empty()) {
    vkCmdCopyBuffer(cb, d.staging_buffer, d.device_buffer, static_cast<uint32_t>(copies.size()),
                    copies.data());
  }
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  if (queries) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 0);
  uint32_t query = 1;
  for (const Dispatch& dp : d.dispatches) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, dp.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.ctx->pipeline_layout, 0, 1,
                            &dp.set, 0, nullptr);
    vkCmdPushConstants(cb, d.ctx->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, dp.push_size,
                       dp.push);
    vkCmdDispatch(cb, dp.groups_x, dp.groups_y, dp.groups_z);
    // Bottom of pipe: written once the dispatch has finished.
    if (queries) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, query++);
    // Each node reads what earlier nodes wrote.
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  }
  copies.clear();
  for (const External& e : d.externals) {
    if (!e.is_input) {
      copies.push_back(VkBufferCopy{d.offsets[e.tensor], e.staging_offset, e.nbytes});
    }
  }
  vkCmdCopyBuffer(cb, d.device_buffer, d.staging_buffer, static_cast<uint32_t>(copies.size()),
                  copies.data());
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  r = vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS) return vk_fail("vkEndCommandBuffer", r);
  ++d.recordings;
  return Error::Ok;
}

Error record_traced(Delegate& d) {
  if (d.traced_commands != VK_NULL_HANDLE) return Error::Ok;
  Context& c = *d.ctx;
  if (c.timestamp_bits == 0 || d.dispatches.empty()) return Error::NotSupported;
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = static_cast<uint32_t>(d.dispatches.size()) + 1;
  VkResult r = vkCreateQueryPool(c.device, &qpi, nullptr, &d.queries);
  if (r != VK_SUCCESS) return vk_fail("vkCreateQueryPool", r);
  d.stamps.resize(qpi.queryCount);
  PTERON_TRY(allocate_commands(c, d.command_pool, &d.traced_commands));
  return record(d, d.traced_commands, d.queries);
}

// The GPU clock has its own origin, so the dispatches are aligned to end where the host wait
// ended (the output copies after them are short), and kept inside `within`.
void report_dispatches(Delegate& d, ExecutionObserver& observer, int32_t within, uint64_t host_ns) {
  const uint32_t n = static_cast<uint32_t>(d.stamps.size());
  VkResult r =
      vkGetQueryPoolResults(d.ctx->device, d.queries, 0, n, n * sizeof(uint64_t), d.stamps.data(),
                            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) return;
  const uint32_t bits = d.ctx->timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  const double period = d.ctx->timestamp_period;
  const auto ns_between = [&](uint64_t a, uint64_t b) {
    return static_cast<uint64_t>(static_cast<double>((b - a) & mask) * period);
  };
  const uint64_t gpu_ns = ns_between(d.stamps[0], d.stamps[n - 1]);
  const uint64_t origin = host_ns > gpu_ns ? host_ns - gpu_ns : 0;
  for (uint32_t i = 0; i + 1 < n; ++i) {
    const Dispatch& dp = d.dispatches[i];
    observer.add_timed_delegate_event(dp.event, dp.debug_id, within,
                                      origin + ns_between(d.stamps[0], d.stamps[i]),
                                      ns_between(d.stamps[i], d.stamps[i + 1]));
  }
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
