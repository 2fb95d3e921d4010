// The Vulkan delegate ("PteronVulkanBackend"): runs a verified payload as one recorded command
// buffer on the process-wide device context. init() plans one device buffer for every tensor
// of the region (sizes from the payload), uploads constants, writes descriptor sets and records
// the commands; execute() copies inputs into a host-visible staging buffer, replays the
// command buffer and copies outputs back.
#pragma once

#include "runtime/backend/backend.h"

namespace pteron {
namespace vulkan {

BackendInterface& backend();

// Which linear/matmul shader delegates initialised afterwards use: Auto picks the
// register-tiled, barrier-free one (linear_reg) on CPU devices (lavapipe) and the shared-memory
// tiled one on GPUs; Direct is one output per invocation. Tests force each.
enum class LinearShader { Auto, Tiled, Direct, Registers };
void set_linear_shader(LinearShader shader);

// Which conv2d shaders delegates initialised afterwards use: Auto picks by shape (conv2d_pw for
// 1x1 stride-1 unpadded convolutions, conv2d_dw for depthwise, conv2d_tiled otherwise, all
// register-tiled); Direct forces the one-output-per-invocation conv2d.comp (the reference the
// tests compare the tiled shaders with).
enum class ConvShader { Auto, Direct };
void set_conv_shader(ConvShader shader);

// Test hooks: the number of command-buffer recordings a delegate made (1 after init; 2 once a
// traced call made the timestamped one) and its device-buffer bytes.
int delegate_recordings(const DelegateHandle* handle);
uint64_t delegate_device_bytes(const DelegateHandle* handle);

}  // namespace vulkan
}  // namespace pteron
