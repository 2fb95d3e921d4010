// The compute shaders, compiled from backends/vulkan/shaders/*.comp to SPIR-V at build time
// (glslc --target-env=vulkan1.2) and embedded as word arrays by embed_spirv.cmake.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron {
namespace vulkan {

struct ShaderCode {
  const char* name;  // the .comp file's stem ("linear")
  const uint32_t* words;
  size_t num_words;
};

extern const ShaderCode kShaders[];
extern const size_t kNumShaders;

// nullptr when no shader has that name.
const ShaderCode* find_shader(const char* name);

}  // namespace vulkan
}  // namespace pteron
