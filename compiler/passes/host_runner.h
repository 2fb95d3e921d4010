// Runs single graph nodes on the host with the runtime's registered kernels. Constant folding
// uses it now; calibration and numerical debugging run whole graphs through it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// Bytes of a tensor value (laid out as its spec says), or an empty span if unknown.
using ValueBytes = std::function<std::span<const uint8_t>(ir::ValueId)>;

// Executes `node` and returns the bytes of each of its outputs. Throws CompileError naming
// the node if an input is unknown, no kernel is registered, or the kernel fails.
std::vector<std::vector<uint8_t>> run_node_on_host(const ir::Graph& graph, const ir::Node& node,
                                                   const ValueBytes& value_bytes);

}  // namespace pteron::compiler
