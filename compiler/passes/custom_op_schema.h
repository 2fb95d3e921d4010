// Schemas of the pteron:: ops that compiler passes introduce (pteron::sdpa, pteron::linear_relu):
// each has one tensor result, a functional form for the graph and an out variant for the
// emitted program, registered together in the global registry.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/op_schema.h"

namespace pteron::compiler {

// `name` is the op without overload ("pteron::sdpa"); `args` are (name, type) pairs in schema
// order, types as torch writes them ("Tensor", "Tensor?", "float", "int"). Registers
// `name.out(args, *, Tensor(a!) out) -> Tensor(a!)` and `name(args) -> Tensor`, and returns
// the functional schema. Call once per op (e.g. from a function-local static).
const ir::OpSchema& register_single_output_op(
    const std::string& name, const std::vector<std::pair<const char*, const char*>>& args);

}  // namespace pteron::compiler
