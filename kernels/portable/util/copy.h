// Copying a tensor into another of the same shape, converting dtype and dim order.
#pragma once

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/unary.h"

namespace pteron {

// dst = src converted to dst's dtype, element by element in logical order, whatever the two
// dim orders are. Shapes must already match (callers check with expect_out_shape).
// Returns false if a dtype is unsupported.
inline bool copy_convert(const Tensor& src, Tensor& dst) {
  if (!is_supported(src.dtype()) || !is_supported(dst.dtype())) return false;
  if (same_layout(src, dst)) {
    if (src.dtype() == dst.dtype()) {  // a plain copy (memmove: in-place calls alias)
      __builtin_memmove(dst.mutable_data(), src.const_data(), dst.nbytes());
      return true;
    }
    return convert_elements(src.dtype(), src.const_data(), 1, dst.dtype(), dst.mutable_data(), 1,
                            dst.numel());
  }
  for_each_row(plan_unary_rows(src, dst), [&](const int64_t* off, int64_t n, const int64_t* st) {
    convert_elements(src.dtype(), element_ptr(src, off[1]), st[1], dst.dtype(),
                     element_ptr(dst, off[0]), st[0], n);
  });
  return true;
}

}  // namespace pteron
