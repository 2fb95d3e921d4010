// aten::min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!)
// min_indices) -> (Tensor(a!) values, Tensor(b!) indices)
//
// Minimum along dim and the position of its first occurrence (NaN counts as the extreme).
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error min_dim_out(KernelContext&, Span<EValue*> args) {
  return max_min_dim_out<false>("aten::min.dim_min", args);
}

}  // namespace

PTERON_KERNEL("aten::min.dim_min", min_dim_out, "TIBTT");

}  // namespace pteron
