// Shared checks of the creation kernels (zeros, ones, empty, rand, ...): a size list from the
// program must be a valid shape that matches out's (resizing a dynamic out).
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace pteron {

inline Error expect_out_size_list(const char* op, Span<const int64_t> size, Tensor& out) {
  if (size.size() > static_cast<size_t>(kMaxTensorDim)) {
    return fail(Error::NotSupported, "%s: rank %zu above %d", op, size.size(), kMaxTensorDim);
  }
  int32_t sizes[kMaxTensorDim];
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || size[d] > INT32_MAX) {
      return fail(Error::InvalidArgument, "%s: size %lld at dim %zu is invalid", op,
                  static_cast<long long>(size[d]), d);
    }
    sizes[d] = static_cast<int32_t>(size[d]);
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, static_cast<int32_t>(size.size())));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

inline Error expect_out_like(const char* op, const Tensor& self, Tensor& out) {
  PTERON_TRY(expect_out_shape(op, out, self.sizes().data(), self.dim()));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

}  // namespace pteron
