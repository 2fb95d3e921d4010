// Shared by the squeeze_copy overloads: drop the size-1 dims in a mask and copy.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Copies `self` into `out` with the dims in `mask` (bit d = dim d) removed where their size is 1
// (dims of other sizes stay, as in torch). Checks out's dtype and shape, naming `op`.
Error squeeze_copy(const char* op, const Tensor& self, uint32_t mask, Tensor& out);

}  // namespace pteron
