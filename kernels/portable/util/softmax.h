// Softmax and log-softmax along one dim, shared by aten::_softmax.out and
// aten::_log_softmax.out. Numerically stable (the row max is subtracted before exp).
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// out = softmax(in, dim) (or log_softmax with `log`). out has in's shape and layout and in's
// dtype, or Float for a Half/BFloat16 input when half_to_float. Any dense layout: the dim is
// walked with its stride, the last-in-memory case is a contiguous fast path.
Error softmax_out(const char* op, const Tensor& in, int64_t dim, bool half_to_float, Tensor& out,
                  bool log);

}  // namespace pteron
