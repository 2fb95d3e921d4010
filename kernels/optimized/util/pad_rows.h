// reflection_pad{1,2,3}d / replication_pad{1,2,3}d for row-major tensors, any dtype: each output
// row is its source row (the padded outer dims mapped by mirroring or clamping) with the middle
// copied by memcpy and the few pad elements on either side written around it; rows are split
// over threads. Negative (cropping) pads, other layouts and malformed arguments run the
// portable kernel, which also reports the errors.
#pragma once

#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {

Error pad_rows_out(const char* op, int32_t k, PadMode mode, KernelContext& ctx, Span<EValue*> args);

}  // namespace pteron::optimized
