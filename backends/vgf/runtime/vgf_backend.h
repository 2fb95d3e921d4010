// The VGF delegate ("PteronVgfBackend"): runs a region compiled to TOSA and converted by Arm's
// ML SDK model converter into a .vgf, as one VK_ARM_data_graph pipeline. init() decodes the
// VGF, creates one linear tensor per graph binding in host-visible memory, the data-graph
// pipeline with the VGF's constants, its session (memory bound), descriptor sets, and records
// the command buffer once; execute() copies inputs into the input tensors, replays the command
// buffer and copies the outputs back.
#pragma once

#include "runtime/backend/backend.h"

namespace pteron {
namespace vgf {

constexpr const char* kBackendId = "PteronVgfBackend";

BackendInterface& backend();

// Test hook: how many times a delegate recorded its command buffer (1 after init).
int delegate_recordings(const DelegateHandle* handle);

}  // namespace vgf
}  // namespace pteron
