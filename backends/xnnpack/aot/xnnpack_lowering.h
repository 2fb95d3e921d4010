// Lowers one claimed region to an XNNPACK payload (the partitioner's `lower`): fp32 nodes,
// int8 dq -> op -> q patterns as qint8 nodes, NHWC inside, channels-last at the boundary.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/partition/partitioner.h"

namespace pteron::xnnpack::aot {

// The payload, or ok=false with the reason XNNPACK refused the finished region. Throws
// std::exception on graphs it cannot read (the partitioner turns that into ok=false).
compiler::LoweredRegion lower_region(const compiler::ir::Graph& graph,
                                     const compiler::Region& region);

}  // namespace pteron::xnnpack::aot
