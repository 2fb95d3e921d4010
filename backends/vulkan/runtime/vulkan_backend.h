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

// How fp16 regions (`vulkan:fp16=on`) initialised afterwards compute. Auto: fp16 arithmetic (the
// `_f16a` shaders) on a GPU with shaderFloat16, else fp32 arithmetic on fp16 storage (`_f16`;
// CPU devices such as lavapipe included: fp16 arithmetic is slower there). StorageOnly forces
// `_f16`; Arithmetic `_f16a` on any device with shaderFloat16. Under Auto the environment
// variable PTERON_VULKAN_FP16_ARITH=0 / =1 does the same. A payload compiled with
// `vulkan:fp16=storage` always runs `_f16`. PTERON_VULKAN_LOG=1 prints each delegate's choice.
enum class Fp16Arithmetic { Auto, StorageOnly, Arithmetic };
void set_fp16_arithmetic(Fp16Arithmetic mode);

// The precision a delegate runs at: "fp32", "fp16 storage, fp32 arithmetic" or "fp16 storage,
// fp16 arithmetic (fp32 accumulation)".
const char* delegate_precision(const DelegateHandle* handle);

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
