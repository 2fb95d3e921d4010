// Constants of the Vulkan payload format (schema/vulkan_payload.fbs), shared by the runtime and
// the ahead-of-time builder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/vulkan/schema/vulkan_payload_generated.h"

namespace pteron {
namespace vulkan {

constexpr const char* kBackendId = "PteronVulkanBackend";
// The payload version this runtime reads and the builder writes.
constexpr uint32_t kPayloadVersion = 1;
constexpr size_t kConstantAlignment = 16;
constexpr size_t kMaxDims = 6;
// Bounds that keep every size computation (32-bit shader indices included) far from overflow.
constexpr uint64_t kMaxDimSize = 0x7fffffff;
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 31;
constexpr size_t kMaxTensors = 1 << 16;
constexpr size_t kMaxNodes = 1 << 16;

const char* op_name(fb::OpType op);

}  // namespace vulkan
}  // namespace pteron
