// Filling a whole tensor with one value (full, fill, constant_pad_nd's border, empty reductions).
#pragma once

#include "kernels/portable/util/convert.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Sets every element of `out` to the value whose bytes (in out's dtype) start `bits` (see
// scalar_bits). Tensors are dense, so this is one flat loop in any dim order.
inline void fill_with_bits(Tensor& out, uint64_t bits) {
  dispatch_by_size(out.element_size(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    __builtin_memcpy(&v, &bits, sizeof(U));  // the value's bytes come first (scalar_bits)
    U* p = out.data<U>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
}

// Sets every element of `t` to the Scalar `value` (Int, Double or Bool EValue) converted to
// t's dtype; int64 values stay exact. Fails, naming `op`, on an unsupported dtype.
Error fill_scalar(const char* op, Tensor& t, const EValue& value);

}  // namespace pteron
