// Optimized kernels handle the common case (float32, dense layouts) and hand everything else,
// including malformed arguments, to the portable kernel of the same operator, which supports
// every dtype and reports errors with its own messages.
#pragma once

#include "runtime/kernel/kernel.h"

namespace pteron::optimized {

// Runs the portable kernel registered as `name` (e.g. "aten::mm.out"); NotSupported if this
// build has none.
Error call_portable(const char* name, KernelContext& ctx, Span<EValue*> args);

}  // namespace pteron::optimized
