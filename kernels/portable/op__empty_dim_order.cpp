// dim_order_ops::_empty_dim_order.out(int[] size, *, int[]? dim_order=None, Tensor(a!) out)
// out of shape size, contents unspecified (ExecuTorch's empty with a layout). The dim order
// given must be out's (the program's memory plan fixes it); None means row-major.
#include "kernels/portable/util/creation.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error empty_dim_order_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "dim_order_ops::_empty_dim_order.out";
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, out));
  const Span<const uint8_t> have = out.dim_order();
  if (args[1]->is_none()) {
    for (size_t d = 0; d < have.size(); ++d) {
      PTERON_CHECK(have[d] == d, Error::InvalidArgument,
                   "%s: no dim_order given (row-major) but out is not row-major", kOp);
    }
    return Error::Ok;
  }
  const Span<const int64_t> want = args[1]->int_list;
  PTERON_CHECK(want.size() == have.size(), Error::InvalidArgument,
               "%s: dim_order has %zu entries for a %zu-d out", kOp, want.size(), have.size());
  for (size_t d = 0; d < want.size(); ++d) {
    PTERON_CHECK(want[d] == have[d], Error::InvalidArgument,
                 "%s: dim_order entry %zu is %lld but out's is %d", kOp, d,
                 static_cast<long long>(want[d]), static_cast<int>(have[d]));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("dim_order_ops::_empty_dim_order.out", empty_dim_order_out, "LlT");

}  // namespace pteron
