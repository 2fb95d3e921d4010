// aten::median.out(Tensor self, *, Tensor(a!) out)
// aten::median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values,
//     Tensor(b!) indices)
// The lower median ((n - 1) / 2 + 1-th smallest) of all elements or along dim, and its position;
// a NaN anywhere in the line is the result (torch.median; util/select_kth.h).
#include "kernels/portable/util/select_kth.h"

namespace pteron {
namespace {

Error median_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::median.out";
  const Tensor& self = *args[0]->tensor;
  PTERON_CHECK(self.numel() > 0, Error::InvalidArgument, "%s: median of an empty tensor", kOp);
  // Every element as one line: a 1-D view of self's dense storage (memory order does not change
  // the median, and this overload returns no position).
  int32_t n = static_cast<int32_t>(self.numel()), stride = 1;
  uint8_t order = 0;
  Tensor flat(self.dtype(), 1, &n, &order, &stride, self.mutable_data());
  SelectOptions opt;
  opt.k = 0;
  opt.nan_is_result = true;
  return select_kth(kOp, ctx, flat, 0, false, opt, *args[1]->tensor, nullptr);
}

Error median_dim_values(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::median.dim_values";
  const Tensor& self = *args[0]->tensor;
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim() == 0 ? 1 : self.dim(), &dim));
  SelectOptions opt;
  opt.k = 0;
  opt.nan_is_result = true;
  return select_kth(kOp, ctx, self, dim, args[2]->b, opt, *args[3]->tensor, args[4]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::median.out", median_out, "TT");
PTERON_KERNEL("aten::median.dim_values", median_dim_values, "TIBTT");

}  // namespace pteron
