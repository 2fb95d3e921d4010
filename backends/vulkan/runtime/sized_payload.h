// A dynamic region's sizes, apart from the device: its private copy of the payload's flatbuffer
// (without the constant blob), each tensor's planned (upper-bound) dims, and writing one call's
// sizes into the copy. The delegate plans its dispatches from the copy (dynamic_sizes.cpp); the
// Vulkan payload fuzzer (tests/fuzz/vulkan_payload_fuzzer.cpp) drives the same code without a GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vulkan/runtime/payload_format.h"
#include "backends/vulkan/runtime/size_expr.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace pteron {
namespace vulkan {

class SizedPayload {
 public:
  // Copies the flatbuffer of `processed` (a payload verify_payload accepted, with symbols),
  // verifies the copy as such and records the planned dims. InvalidProgram when the copy is
  // not a whole flatbuffer (a file may place tables after the blob's offset).
  Error init(Span<const uint8_t> processed, const fb::Payload& verified);

  bool empty() const { return bytes_.empty(); }
  // The copy; its dims are the last resize()'s sizes (the planned ones before any).
  const fb::Payload& payload() const;
  uint32_t planned_dim(uint32_t tensor, uint32_t k) const {
    return planned_dims_[tensor * kMaxDims + k];
  }

  // Writes the sizes `symbols` (one point range per payload symbol) give into the copy's dims,
  // each within [1, planned], then verifies the copy again so every shape rule holds at these
  // sizes. InvalidProgram naming the tensor and dim otherwise (the copy's dims are then
  // partly written: resize() again before using them).
  Error resize(Span<const SizeRange> symbols);

 private:
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> planned_dims_;  // kMaxDims per tensor
};

}  // namespace vulkan
}  // namespace pteron
