// What a kernel library would leave of a delegate's candidate region if the delegate gave it
// back: the cost model weighs a region's convolutions and matrix products on each side, which
// says nothing about the rest of the region. For the int8 library that rest matters: an op its
// lowering has no pattern for stays float between a dequantize and a quantize, with layout
// transposes around it (EfficientNet's sigmoids: the program ran 2x slower than on XNNPACK).
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/partition/partitioner.h"
#include "compiler/partition/registry.h"

namespace pteron::compiler {

// The compute nodes among `nodes` that `library`'s passes leave as they are, run on a copy of
// the whole graph as if no delegate took anything: neither rewritten into the library's ops nor
// views, quantize or dequantize nodes (which become the library's own).
struct LeftByLibrary {
  std::vector<std::string> ops;  // "aten::sigmoid x16" per op, in order of first appearance
  double elements = 0;           // of their tensor inputs and outputs, counted per node
};
LeftByLibrary left_by_library(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                              const KernelLibrary& library, const PartitionContext& context);

}  // namespace pteron::compiler
