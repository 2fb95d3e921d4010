// Whether the Vulkan delegate runs a node, and if not, why (the delegation report's reason):
// dtype, layout and size limits of every tensor, each op's argument rules, the ops next to
// supported ones that it refuses with a specific reason, and which ops it resizes at execute
// for bounded dynamic shapes. Internal to the Vulkan partitioner.
#pragma once

#include <string>

#include "compiler/ir/graph.h"

namespace pteron::vulkan {

// Empty when the delegate runs `n` (static or dynamic), else the reason it does not.
std::string vulkan_refusal(const compiler::ir::Graph& g, const compiler::ir::Node& n);

}  // namespace pteron::vulkan
