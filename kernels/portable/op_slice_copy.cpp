// aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt
// step=1, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error slice_copy_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::slice_copy.Tensor_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot slice a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  const int64_t step = args[4]->i;
  PTERON_CHECK(step > 0, Error::InvalidArgument, "%s: step must be positive, got %lld", kOp,
               static_cast<long long>(step));
  // torch's clamping: negative bounds count from the end, then both clamp to [0, size] and an
  // end before the start gives an empty slice.
  const int64_t size = self.size(dim);
  int64_t start = args[2]->is_none() ? 0 : args[2]->i;
  int64_t end = args[3]->is_none() ? size : args[3]->i;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  const int64_t len = end == start ? 0 : (end - start - 1) / step + 1;
  // A step past the end selects one element; capping it keeps the stride from overflowing.
  const int64_t stride_step = step < size ? step : 1;

  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) {
    sizes[d] = d == dim ? static_cast<int32_t>(len) : self.size(d);
    strides[d] = d == dim ? self.stride(d) * stride_step : self.stride(d);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  copy_view(self, start * self.stride(dim), strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::slice_copy.Tensor_out", slice_copy_tensor_out, "TIiiIT");

}  // namespace pteron
