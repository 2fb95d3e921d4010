// aten::kthvalue.values(Tensor self, SymInt k, int dim=-1, bool keepdim=False, *,
//     Tensor(a!) values, Tensor(b!) indices)
// The k-th smallest element along dim (1-based; NaN sorts last) and its position
// (util/select_kth.h; equal values: the position ATen's quickselect reports).
#include "kernels/portable/util/select_kth.h"

namespace pteron {
namespace {

Error kthvalue_values(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::kthvalue.values";
  const Tensor& self = *args[0]->tensor;
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim() == 0 ? 1 : self.dim(), &dim));
  SelectOptions opt;
  opt.k = args[1]->i;
  opt.aten_quickselect = true;
  PTERON_CHECK(opt.k >= 1, Error::InvalidArgument, "%s: k must be >= 1, got %lld", kOp,
               static_cast<long long>(opt.k));
  return select_kth(kOp, ctx, self, dim, args[3]->b, opt, *args[4]->tensor, args[5]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::kthvalue.values", kthvalue_values, "TIIBTT");

}  // namespace pteron
