// Reading and validating index tensors (int32 or int64) for gather-style kernels. Every index is
// checked before any element moves, so a bad index fails the op without touching memory.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Fails, naming `op` and `what`, unless `t` is int64 (or int32 when `allow_int32`).
Error expect_index_dtype(const char* op, const Tensor& t, const char* what, bool allow_int32);

// Element `offset` of an int32 or int64 tensor.
inline int64_t load_index(const Tensor& t, int64_t offset) {
  return t.dtype() == ScalarType::Long ? t.data<const int64_t>()[offset]
                                       : static_cast<int64_t>(t.data<const int32_t>()[offset]);
}

// Checks that every element of `t` lies in [0, size), or [-size, size) with `allow_negative`.
// The message names `op`, the bad index, the dim it indexes and its size.
Error check_indices(const char* op, const Tensor& t, int64_t size, int32_t dim,
                    bool allow_negative);

}  // namespace pteron
