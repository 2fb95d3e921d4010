// How the cortex_m convolutions and transposes may write their output over their input (the memory
// planner's InPlaceRule, registered in register.cpp): starting window_in_place_lag bytes before it,
// for the kernels' order of reads and writes described in kernels/cortex_m/in_place.h.
#pragma once

#include "compiler/ir/in_place.h"

namespace pteron::cortex_m::aot {

std::optional<uint64_t> conv2d_in_place(const compiler::ir::Graph& graph,
                                        const compiler::ir::Node& node,
                                        compiler::ir::ValueId input);
std::optional<uint64_t> depthwise_conv2d_in_place(const compiler::ir::Graph& graph,
                                                  const compiler::ir::Node& node,
                                                  compiler::ir::ValueId input);

// cortex_m::transpose: its output slabs are written in order after reading their bytes.
std::optional<uint64_t> transpose_in_place(const compiler::ir::Graph& graph,
                                           const compiler::ir::Node& node,
                                           compiler::ir::ValueId input);

}  // namespace pteron::cortex_m::aot
