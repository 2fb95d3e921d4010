#include "kernels/portable/util/squeeze.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {

Error squeeze_copy(const char* op, const Tensor& self, uint32_t mask, Tensor& out) {
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  int32_t sizes[kMaxTensorDim];
  int32_t dim = 0;
  for (int32_t d = 0; d < self.dim(); ++d) {
    if (!((mask >> d) & 1u) || self.size(d) != 1) sizes[dim++] = self.size(d);
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  copy_logical_order(self, out);  // removing size-1 dims keeps row-major element order
  return Error::Ok;
}

}  // namespace pteron
