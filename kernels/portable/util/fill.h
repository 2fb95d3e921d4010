// Fills a whole tensor with one Scalar value (constant_pad_nd's border, empty reductions).
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Sets every element of `t` to the Scalar `value` (Int, Double or Bool EValue) converted to
// t's dtype; int64 values stay exact. Fails, naming `op`, on an unsupported dtype.
Error fill_scalar(const char* op, Tensor& t, const EValue& value);

}  // namespace pteron
