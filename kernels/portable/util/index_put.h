// out = self; out[indices] = values (or += with accumulate): the body of index_put.out and of
// ExecuTorch's in-place index_put_ (out = self).
#pragma once

#include "runtime/kernel/kernel.h"

namespace pteron {

// `op` names the kernel in errors; `indices` as Tensor?[] (null entries are full slices).
Error index_put_into(KernelContext& ctx, const char* op, const Tensor& self,
                     Span<Tensor* const> indices, const Tensor& values, bool accumulate,
                     Tensor& out);

}  // namespace pteron
