// The float range a clamping activation (relu, hardtanh, clamp) keeps, so quantized lowerings
// (cortex_m, TOSA) can fold it into the producing op's output clamp.
#pragma once

#include <optional>
#include <utility>

#include "compiler/ir/node.h"

namespace pteron::compiler {

// [lo, hi] of relu / hardtanh / clamp (an absent clamp bound is +-infinity); nullopt for any
// other op.
std::optional<std::pair<double, double>> activation_bounds(const ir::Node& n);

}  // namespace pteron::compiler
