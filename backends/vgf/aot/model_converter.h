// Runs Arm's ML SDK model converter (PyPI ai-ml-sdk-model-converter, `model-converter --input
// x.tosa --output x.vgf`) as a subprocess, to turn a region's TOSA flatbuffer into a .vgf.
//
// Which program: $PTERON_MODEL_CONVERTER when set, else the one in the Arm tools venv this
// build was configured with (PTERON_ARM_VENV/bin/model-converter), else `model-converter` on
// PATH. A missing tool or a failed conversion is one line in `error`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pteron {
namespace vgf {

// The converter that would run, or "" with `error` set when none is found.
std::string find_model_converter(std::string* error);

bool convert_tosa_to_vgf(const std::vector<uint8_t>& tosa, std::vector<uint8_t>* vgf,
                         std::string* error);

}  // namespace vgf
}  // namespace pteron
