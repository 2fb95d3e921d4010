// aten::diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out)
// out = the diagonal of the (dim1, dim2) planes, offset above (positive) or below the main one:
// dim1 and dim2 are removed and a last dim holds the diagonal. A view of self's strides.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error diagonal_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::diagonal_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() >= 2, Error::InvalidArgument, "%s: needs at least 2 dims, got %d", kOp,
               static_cast<int>(self.dim()));
  int32_t d1 = 0, d2 = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &d1));
  PTERON_TRY(normalize_dim(kOp, args[3]->i, self.dim(), &d2));
  PTERON_CHECK(d1 != d2, Error::InvalidArgument, "%s: dim1 and dim2 are both %d", kOp,
               static_cast<int>(d1));
  const int64_t offset = args[1]->i;
  const int64_t n1 = self.size(d1), n2 = self.size(d2);
  // Length of the diagonal, 0 when the offset leaves the plane (checked first: the program's
  // offset may be any int64, whose negation could overflow).
  int64_t len = 0;
  if (offset < n2 && offset > -n1) {
    len =
        offset >= 0 ? (n2 - offset < n1 ? n2 - offset : n1) : (n1 + offset < n2 ? n1 + offset : n2);
  }
  const int64_t start = len == 0      ? 0
                        : offset >= 0 ? offset * self.stride(d2)
                                      : -offset * self.stride(d1);
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  int32_t rank = 0;
  for (int32_t d = 0; d < self.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes[rank] = self.size(d);
    strides[rank++] = self.stride(d);
  }
  sizes[rank] = static_cast<int32_t>(len);
  strides[rank++] = static_cast<int64_t>(self.stride(d1)) + self.stride(d2);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, rank));
  copy_view(self, start, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::diagonal_copy.out", diagonal_copy_out, "TIIIT");

}  // namespace pteron
