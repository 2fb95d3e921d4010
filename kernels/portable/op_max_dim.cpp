// aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!)
// max_values) -> (Tensor(a!) values, Tensor(b!) indices)
//
// Maximum along dim and the position of its first occurrence (NaN counts as the extreme).
#include "kernels/portable/util/reduce_minmax.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error max_dim_out(KernelContext&, Span<EValue*> args) {
  return max_min_dim_out<true>("aten::max.dim_max", args);
}

}  // namespace

PTERON_KERNEL("aten::max.dim_max", max_dim_out, "TIBTT");

}  // namespace pteron
