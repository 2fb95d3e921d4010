// aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error transpose_copy_int_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::transpose_copy.int_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  int32_t d0 = 0, d1 = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &d0));
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &d1));
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) {
    const int32_t s = d == d0 ? d1 : d == d1 ? d0 : d;
    sizes[d] = self.size(s);
    strides[d] = self.stride(s);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::transpose_copy.int_out", transpose_copy_int_out, "TIIT");

}  // namespace pteron
