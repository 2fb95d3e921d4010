// aten::cummin.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices)
// Running minimum along dim and the index where it was last reached (util/cum_extreme.h).
#include "kernels/portable/util/cum_extreme.h"

namespace pteron {
namespace {

Error cummin_out(KernelContext&, Span<EValue*> args) {
  return cum_extreme_out<false>("aten::cummin.out", args);
}

}  // namespace

PTERON_KERNEL("aten::cummin.out", cummin_out, "TITT");

}  // namespace pteron
