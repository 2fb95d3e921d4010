// The sizes a view asks for (view_copy, ExecuTorch's et_view): at most one -1, inferred from
// self's element count; every other size non-negative and within int32; the product must equal
// self's element count.
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Writes size.size() entries to `sizes` (room for kMaxTensorDim); one-line errors naming `op`.
Error resolve_view_sizes(const char* op, const Tensor& self, Span<const int64_t> size,
                         int32_t* sizes);

}  // namespace pteron
