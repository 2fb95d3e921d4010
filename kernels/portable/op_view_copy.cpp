// aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/view_shape.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error view_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::view_copy.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  int32_t sizes[kMaxTensorDim];
  PTERON_TRY(resolve_view_sizes(kOp, self, size, sizes));
  PTERON_TRY(expect_out_shape(kOp, out, sizes, static_cast<int32_t>(size.size())));
  copy_logical_order(self, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::view_copy.out", view_copy_out, "TLT");

}  // namespace pteron
