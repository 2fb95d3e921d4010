// Checks an untrusted Vulkan payload completely (flatbuffer structure, version, tensor shapes
// and constant ranges, node arity and shape rules, data flow, argument indices) before the
// backend allocates anything from it.
#pragma once

#include <cstdint>

#include "backends/vulkan/runtime/payload_format.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace pteron {
namespace vulkan {

// On success `*out` points at the payload's root. Errors: InvalidProgram with a message naming
// the tensor or node and what is wrong.
Error verify_payload(Span<const uint8_t> payload, const fb::Payload** out);

// A dynamic region's private copy of its flatbuffer (no constant blob) after the runtime wrote
// one call's sizes into its tensors' dims: the same checks except the blob's place and the
// size expressions' bounds (checked at load, against the planned dims this copy no longer
// holds), so every shape rule holds at the sizes the dispatches are planned for.
Error verify_resized_payload(Span<const uint8_t> flatbuffer);

// Elements of a verified tensor.
uint64_t tensor_numel(const fb::Tensor& t);
// Bytes per element of a dtype (0 for an unknown one).
uint32_t element_size(fb::DataType dtype);
// Bytes of a verified tensor.
inline uint64_t tensor_bytes(const fb::Tensor& t) {
  return tensor_numel(t) * element_size(t.dtype());
}

}  // namespace vulkan
}  // namespace pteron
