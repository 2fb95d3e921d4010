// Filling a whole tensor with one value (full, fill, zeros-like creation ops).
#pragma once

#include "kernels/portable/util/convert.h"

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

}  // namespace pteron
