// Lowers a region the Vulkan partitioner claimed to a PVK1 payload
// (backends/vulkan/schema/vulkan_payload.fbs): tensors, constants, nodes, and for bounded
// dynamic shapes the size symbols and each dynamic tensor's sizes as expressions of them.
// Internal to the Vulkan partitioner.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/partition/partitioner.h"

namespace pteron::vulkan {

// Throws (compiler::refuse) on anything the payload cannot carry; lower() reports it.
// fp16: every float tensor inside the region (constants included) is stored as fp16; region
// inputs and outputs stay fp32 and cross the boundary through Convert nodes.
// fp16_arithmetic: computed in fp16 where the device can (else fp32 on fp16 storage).
std::vector<uint8_t> build_payload(const compiler::ir::Graph& g, const compiler::Region& region,
                                   bool fp16, bool fp16_arithmetic);

}  // namespace pteron::vulkan
