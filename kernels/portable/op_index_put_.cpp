// aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)
//     -> Tensor(a!)
// In place, as ExecuTorch's portable list has it (programs ExecuTorch writes may call it):
// self[indices] = values (or +=). The last argument is the returned self.
#include "kernels/portable/util/index_put.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error index_put_in_place(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::index_put_";
  Tensor& self = *args[0]->tensor;
  PTERON_CHECK(args[4]->tensor->const_data() == self.const_data(), Error::InvalidArgument,
               "%s: the returned tensor is not self", kOp);
  return index_put_into(ctx, kOp, self, args[1]->tensor_list, *args[2]->tensor, args[3]->b, self);
}

}  // namespace

PTERON_KERNEL("aten::index_put_", index_put_in_place, "TOTBT");

}  // namespace pteron
