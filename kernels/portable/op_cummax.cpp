// aten::cummax.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices)
// Running maximum along dim and the index where it was last reached (util/cum_extreme.h).
#include "kernels/portable/util/cum_extreme.h"

namespace pteron {
namespace {

Error cummax_out(KernelContext&, Span<EValue*> args) {
  return cum_extreme_out<true>("aten::cummax.out", args);
}

}  // namespace

PTERON_KERNEL("aten::cummax.out", cummax_out, "TITT");

}  // namespace pteron
