// What the VGF delegate needs from a .vgf file, read with Arm's VGF library (C decoder API,
// libvgf.a): the one graph segment's SPIR-V module and entry point, its descriptor bindings,
// the model's inputs and outputs in order, and the graph constants. Everything is checked while
// decoding: an invalid or unsupported file is an error naming what is wrong, never a crash.
// Views point into the VGF bytes, which must outlive the model.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vgf/runtime/vk_arm.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron {
namespace vgf {

struct Resource {  // one model-resource-table entry (a tensor)
  VkFormat format = VK_FORMAT_UNDEFINED;
  std::vector<int64_t> shape;
  uint64_t nbytes = 0;  // packed
};

struct Binding {
  uint32_t set;
  uint32_t binding;
  uint32_t mrt_index;
};

struct GraphConstant {
  uint32_t id;  // graph constant id in the SPIR-V module
  uint32_t mrt_index;
  const uint8_t* data;
  uint64_t size;
};

struct Model {
  std::vector<Resource> resources;
  const uint32_t* spirv = nullptr;
  size_t spirv_words = 0;
  const char* entry_point = nullptr;
  std::vector<Binding> bindings;  // every descriptor binding of the segment
  std::vector<uint32_t> inputs;   // binding index (into `bindings`) of model input i
  std::vector<uint32_t> outputs;  // binding index of model output i
  std::vector<GraphConstant> constants;
  std::vector<uint8_t> decoder_memory;  // backs the decoders' views
};

Result<Model*> decode_vgf(Span<const uint8_t> vgf);

// Bytes per element of the tensor formats the delegate supports, 0 for others.
uint32_t format_size(VkFormat f);

}  // namespace vgf
}  // namespace pteron
