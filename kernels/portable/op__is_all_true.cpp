// pteron::_is_all_true.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
//
// Whether every element of a bool tensor is true, as a 0-d bool tensor: the condition of
// torch._check_tensor_all, which pteron checks at run time (torch has no out-variant of
// aten::_is_all_true; this is pteron's). An empty tensor is all true, as in torch.
#include "kernels/portable/util/logical_walk.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error is_all_true_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "pteron::_is_all_true.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(self.dtype() == ScalarType::Bool, Error::InvalidArgument,
               "%s: self must be bool (as torch's), got %s", kOp, scalar_type_name(self.dtype()));
  PTERON_CHECK(out.dtype() == ScalarType::Bool && out.numel() == 1, Error::InvalidArgument,
               "%s: out must be one bool", kOp);
  bool all = true;
  const int64_t n = self.numel();
  LogicalWalk walk(self);
  for (int64_t i = 0; i < n && all; ++i, walk.next()) all = mask_at(self, walk.offset);
  *out.data<bool>() = all;
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::_is_all_true.out", is_all_true_out, "TT");

}  // namespace pteron
