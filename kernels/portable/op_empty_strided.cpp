// aten::empty_strided.out(SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> Tensor(a!)
// out of shape size, contents unspecified. The layout is out's own (the memory planner's), so
// stride is only checked to be one non-negative entry per dim.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error empty_strided_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::empty_strided.out";
  const Span<const int64_t> stride = args[1]->int_list;
  PTERON_CHECK(stride.size() == args[0]->int_list.size(), Error::InvalidArgument,
               "%s: %zu strides for %zu sizes", kOp, stride.size(), args[0]->int_list.size());
  for (size_t d = 0; d < stride.size(); ++d) {
    PTERON_CHECK(stride[d] >= 0, Error::InvalidArgument, "%s: stride %lld at dim %zu is negative",
                 kOp, static_cast<long long>(stride[d]), d);
  }
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, *args[2]->tensor));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::empty_strided.out", empty_strided_out, "LLT");

}  // namespace pteron
