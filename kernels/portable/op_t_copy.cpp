// aten::t_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Transposes a 2-D tensor; 0-D and 1-D tensors are copied unchanged.
Error t_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::t_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(self.dim() <= 2, Error::InvalidArgument, "%s: expects a tensor of rank <= 2, got %d",
               kOp, self.dim());
  if (self.dim() < 2) return copy_tensor(kOp, self, out);
  const int32_t sizes[2] = {self.size(1), self.size(0)};
  const int64_t strides[2] = {self.stride(1), self.stride(0)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::t_copy.out", t_copy_out, "TT");

}  // namespace pteron
