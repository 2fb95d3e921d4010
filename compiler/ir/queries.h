// Small questions every stage asks of the IR: how many elements a shape has, how to print one
// in a message, which op a node calls. One definition each (the lowerings and passes had their
// own copies).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "compiler/ir/node.h"

namespace pteron::compiler::ir {

// The number of elements of a tensor of `sizes` (1 for a scalar's empty list).
int64_t numel(std::span<const int64_t> sizes);

// "[2, 4]": sizes as messages and refusal reasons print them.
std::string shape_str(std::span<const int64_t> sizes);

// True when `n` calls `op` ("aten::add.Tensor": namespace, name and overload).
bool is_op(const Node& n, std::string_view op);

}  // namespace pteron::compiler::ir
