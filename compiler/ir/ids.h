// Stable identifiers of values and nodes in a Graph. An id never changes and is never reused,
// so passes and side tables (memory plans, partitions, debug maps) can key on it.
#pragma once

#include <cstdint>

namespace pteron::compiler::ir {

using ValueId = uint32_t;
using NodeId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;
inline constexpr NodeId kNoNode = UINT32_MAX;

}  // namespace pteron::compiler::ir
