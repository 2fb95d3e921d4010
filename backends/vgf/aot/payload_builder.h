// Writes VGF delegate payloads (runtime/payload_format.h): the I/O table and the .vgf bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vgf/runtime/payload_format.h"

namespace pteron {
namespace vgf {

std::vector<uint8_t> build_payload(const std::vector<uint8_t>& vgf,
                                   const std::vector<IoDesc>& inputs,
                                   const std::vector<IoDesc>& outputs);

// The I/O table read from the VGF's own model inputs/outputs (dtype from the VkFormat, shape
// from the resource table). Empty vectors and `error` set when the VGF cannot be decoded.
bool io_from_vgf(const std::vector<uint8_t>& vgf, std::vector<IoDesc>* inputs,
                 std::vector<IoDesc>* outputs, std::string* error);

}  // namespace vgf
}  // namespace pteron
