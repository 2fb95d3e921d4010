#include "kernels/portable/util/view_shape.h"

#include <cstdint>

namespace pteron {

Error resolve_view_sizes(const char* kOp, const Tensor& self, Span<const int64_t> size,
                         int32_t* sizes) {
  PTERON_CHECK(size.size() <= static_cast<size_t>(kMaxTensorDim), Error::NotSupported,
               "%s: rank %zu above %d", kOp, size.size(), kMaxTensorDim);
  int32_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      PTERON_CHECK(infer < 0, Error::InvalidArgument, "%s: only one dimension can be -1", kOp);
      infer = static_cast<int32_t>(i);
      continue;
    }
    PTERON_CHECK(size[i] >= 0 && size[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: invalid size %lld at dim %zu", kOp, static_cast<long long>(size[i]), i);
    sizes[i] = static_cast<int32_t>(size[i]);
    known *= size[i];
    PTERON_CHECK(known <= INT32_MAX, Error::InvalidArgument, "%s: shape too large", kOp);
  }
  if (infer >= 0) {
    PTERON_CHECK(known != 0, Error::InvalidArgument,
                 "%s: cannot infer the -1 dimension of a shape with a 0 size", kOp);
    PTERON_CHECK(self.numel() % known == 0, Error::InvalidArgument,
                 "%s: cannot infer the -1 dimension: shape is invalid for input of size %lld", kOp,
                 static_cast<long long>(self.numel()));
    sizes[infer] = static_cast<int32_t>(self.numel() / known);
  } else {
    PTERON_CHECK(known == self.numel(), Error::InvalidArgument,
                 "%s: shape has %lld elements, input has %lld", kOp, static_cast<long long>(known),
                 static_cast<long long>(self.numel()));
  }
  return Error::Ok;
}

}  // namespace pteron
