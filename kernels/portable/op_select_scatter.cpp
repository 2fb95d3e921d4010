// aten::select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out.select(dim, index) = src (src has self's shape without dim).
Error select_scatter_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::select_scatter.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& src = *args[1]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, src, self.dtype(), "src"));
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot select from a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &dim));
  const int64_t size = self.size(dim);
  int64_t index = args[3]->i;
  PTERON_CHECK(index >= -size && index < size, Error::OutOfRange,
               "%s: index %lld is out of bounds for dimension %d with size %lld", kOp,
               static_cast<long long>(index), dim, static_cast<long long>(size));
  if (index < 0) index += size;
  PTERON_CHECK(src.dim() == self.dim() - 1, Error::InvalidArgument,
               "%s: src has rank %d, expected %d", kOp, src.dim(), self.dim() - 1);
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0, k = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    PTERON_CHECK(src.size(k) == self.size(d), Error::InvalidArgument,
                 "%s: src size %d at dim %d, self has %d", kOp, src.size(k), k, self.size(d));
    ++k;
  }
  PTERON_TRY(start_from_self(kOp, self, out));
  if (src.numel() == 0) return Error::Ok;
  for (int32_t d = 0, k = 0; d < out.dim(); ++d) {
    if (d != dim) strides[k++] = out.stride(d);
  }
  copy_into_view(src, out, index * out.stride(dim), strides);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::select_scatter.out", select_scatter_out, "TTIIT");

}  // namespace pteron
