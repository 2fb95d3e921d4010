// aten::slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None,
// SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out[..., start:end:step, ...] = src (src has the slice's shape).
Error slice_scatter_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::slice_scatter.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& src = *args[1]->tensor;
  Tensor& out = *args[6]->tensor;
  PTERON_TRY(expect_dtype(kOp, src, self.dtype(), "src"));
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot slice a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &dim));
  const int64_t step = args[5]->i;
  PTERON_CHECK(step > 0, Error::InvalidArgument, "%s: step must be positive, got %lld", kOp,
               static_cast<long long>(step));
  // torch's clamping, as in slice_copy: negative bounds count from the end, both clamp to
  // [0, size], an end before the start is an empty slice.
  const int64_t size = self.size(dim);
  int64_t start = args[3]->is_none() ? 0 : args[3]->i;
  int64_t end = args[4]->is_none() ? size : args[4]->i;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  const int64_t len = end == start ? 0 : (end - start - 1) / step + 1;
  PTERON_CHECK(src.dim() == self.dim(), Error::InvalidArgument,
               "%s: src has rank %d, self has rank %d", kOp, src.dim(), self.dim());
  for (int32_t d = 0; d < self.dim(); ++d) {
    const int64_t want = d == dim ? len : self.size(d);
    PTERON_CHECK(src.size(d) == want, Error::InvalidArgument,
                 "%s: src size %d at dim %d, the slice has %lld", kOp, src.size(d), d,
                 static_cast<long long>(want));
  }
  PTERON_TRY(start_from_self(kOp, self, out));
  if (src.numel() == 0) return Error::Ok;
  const int64_t stride_step = step < size ? step : 1;  // one element: keep the stride small
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < out.dim(); ++d)
    strides[d] = d == dim ? out.stride(d) * stride_step : out.stride(d);
  copy_into_view(src, out, start * out.stride(dim), strides);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::slice_scatter.out", slice_scatter_out, "TTIiiIT");

}  // namespace pteron
