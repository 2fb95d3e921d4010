// reflection_pad{1,2,3}d and replication_pad{1,2,3}d: the last k dims padded by mirroring
// (without repeating the edge) or by repeating the edge element.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"

namespace pteron {

enum class PadMode { Reflect, Replicate };

// Runs `op` (spatial dims `k`, so self is (k+1)-d or (k+2)-d): checks self, the 2k pads
// ((before, after) pairs from the last dim) and out, then fills out with strided copies
// (every dtype, any dim orders). args: self, padding, out.
Error pad_modes_out(const char* op, int32_t k, PadMode mode, Span<EValue*> args);

}  // namespace pteron
