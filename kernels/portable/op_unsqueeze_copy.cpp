// aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error unsqueeze_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::unsqueeze_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() < kMaxTensorDim, Error::NotSupported, "%s: rank above %d", kOp,
               kMaxTensorDim);
  int32_t dim = 0;  // the new dim may sit anywhere in [0, self.dim()]
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim() + 1, &dim));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0, s = 0; d <= self.dim(); ++d) sizes[d] = d == dim ? 1 : self.size(s++);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim() + 1));
  copy_logical_order(self, out);  // adding a size-1 dim keeps row-major element order
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::unsqueeze_copy.out", unsqueeze_copy_out, "TIT");

}  // namespace pteron
