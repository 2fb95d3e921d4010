// A kernel's promise that its output may share memory with one of its inputs, which the memory
// planner acts on where that input is dead after the node (plan_graph_memory). Kernel libraries
// declare one rule per op (KernelLibrary::in_place_ops).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// How many bytes before `input`'s first byte the output of `node` may start so that its kernel
// never overwrites an input byte it has still to read: 0 for the same bytes, more for a kernel
// that reads ahead of what it writes (a convolution's window); nullopt: the two must not overlap.
using InPlaceRule =
    std::function<std::optional<uint64_t>(const ir::Graph&, const ir::Node&, ir::ValueId input)>;

// Element-wise kernels on operands of the output's size: each element is read before the same
// element of the output is written, so the output may take the input's bytes.
inline std::optional<uint64_t> elementwise_in_place(const ir::Graph& graph, const ir::Node& node,
                                                    ir::ValueId input) {
  if (node.outputs.size() != 1 ||
      graph.value(input).spec.nbytes() != graph.value(node.outputs[0]).spec.nbytes()) {
    return std::nullopt;
  }
  return 0;
}

}  // namespace pteron::compiler
