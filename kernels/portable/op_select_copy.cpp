// aten::select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error select_copy_int_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::select_copy.int_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot select from a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  const int64_t size = self.size(dim);
  int64_t index = args[2]->i;
  PTERON_CHECK(index >= -size && index < size, Error::OutOfRange,
               "%s: index %lld out of range for dim %d of size %lld", kOp,
               static_cast<long long>(index), dim, static_cast<long long>(size));
  if (index < 0) index += size;
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0, o = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    sizes[o] = self.size(d);
    strides[o++] = self.stride(d);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim() - 1));
  copy_view(self, index * self.stride(dim), strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::select_copy.int_out", select_copy_int_out, "TIIT");

}  // namespace pteron
