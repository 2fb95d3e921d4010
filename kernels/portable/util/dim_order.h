// Checks shared by the dim-order copy ops (dim_order_ops::_to_dim_order_copy, _clone_dim_order):
// the requested dim order must be the layout the out tensor was planned with.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

// True when `a` and `b` (same shape) lay their elements out identically. Dims of size 1 do not
// count: their order is arbitrary, so channels-last with C == 1 matches contiguous.
bool same_layout(const Tensor& a, const Tensor& b);

// `dim_order` is the op's `int[]? dim_order` argument. A list must be a permutation of
// 0..rank-1 that describes out's layout; None means "keep self's layout", so out must match
// self. Fails with a message naming `op`.
Error check_dim_order_arg(const char* op, const EValue& dim_order, const Tensor& self,
                          const Tensor& out);

}  // namespace pteron
