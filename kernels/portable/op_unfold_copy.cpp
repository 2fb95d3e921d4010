// aten::unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out)
// out = every window of `size` elements along `dimension`, `step` apart: that dim becomes the
// window count (n - size) / step + 1 and a new last dim of `size` holds each window. A view of
// self's strides, copied into out's dim order.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error unfold_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::unfold_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() < kMaxTensorDim, Error::NotSupported, "%s: rank %d too high", kOp,
               static_cast<int>(self.dim()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim() == 0 ? 1 : self.dim(), &dim));
  const int64_t size = args[2]->i, step = args[3]->i;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  PTERON_CHECK(size >= 0 && size <= n, Error::InvalidArgument,
               "%s: size %lld must be in [0, %lld] (the dim's size)", kOp,
               static_cast<long long>(size), static_cast<long long>(n));
  PTERON_CHECK(step > 0, Error::InvalidArgument, "%s: step must be positive, got %lld", kOp,
               static_cast<long long>(step));
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  int32_t rank = 0;
  const int64_t windows = (n - size) / step + 1;
  // One window: the step is never taken (and may be huge), so it must not scale the stride.
  const int64_t stride_step = windows > 1 ? step : 1;
  for (int32_t d = 0; d < self.dim(); ++d, ++rank) {
    sizes[rank] = d == dim ? static_cast<int32_t>(windows) : self.size(d);
    strides[rank] = d == dim ? self.stride(d) * stride_step : self.stride(d);
  }
  sizes[rank] = static_cast<int32_t>(size);
  strides[rank] = self.dim() == 0 ? 1 : self.stride(dim);
  ++rank;
  PTERON_TRY(expect_out_shape(kOp, out, sizes, rank));
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::unfold_copy.out", unfold_copy_out, "TIIIT");

}  // namespace pteron
