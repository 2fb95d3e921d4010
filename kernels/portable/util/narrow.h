// Copies a narrowed view (a run of indices along one dim) into an out tensor: the step shared by
// the split ops.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Copies self[..., start:start+len, ...] (along `dim`, already normalised and in range) into
// `out`, checking out's dtype and shape; `index` names the out in messages.
Error copy_narrow(const char* op, const Tensor& self, int32_t dim, int64_t start, int64_t len,
                  Tensor& out, size_t index);

}  // namespace pteron
