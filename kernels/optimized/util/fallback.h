// Optimized kernels cover the common case (float32, default dim order) and hand everything
// else to the portable kernel of the same op, so they accept every input the portable one does.
#pragma once

#include "runtime/core/error.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {

// Runs the "portable" library's kernel `name` ("aten::add.out"); NotSupported if the build
// has none.
Error call_portable(const char* name, KernelContext& ctx, Span<EValue*> args);

}  // namespace pteron::opt
