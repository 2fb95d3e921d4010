#include "kernels/portable/util/narrow.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {

Error copy_narrow(const char* op, const Tensor& self, int32_t dim, int64_t start, int64_t len,
                  Tensor& out, size_t index) {
  if (out.dtype() != self.dtype()) {
    return fail(Error::InvalidArgument, "%s: out[%zu] has dtype %s, expected %s", op, index,
                scalar_type_name(out.dtype()), scalar_type_name(self.dtype()));
  }
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) {
    sizes[d] = d == dim ? static_cast<int32_t>(len) : self.size(d);
    strides[d] = self.stride(d);
  }
  if (expect_out_shape(op, out, sizes, self.dim()) != Error::Ok) {
    return fail(Error::InvalidArgument, "%s: out[%zu]: %s", op, index, last_error_message());
  }
  copy_view(self, start * self.stride(dim), strides, out);
  return Error::Ok;
}

}  // namespace pteron
