// aten::tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out)
// out = the lower triangle of each matrix in the last two dims (row i, column j kept unless
// j - i > diagonal), the rest zero. Any dim orders.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/triangle.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error tril_out(KernelContext&, Span<EValue*> args) {
  return triangle_out("aten::tril.out", args, /*lower=*/true);
}

}  // namespace

PTERON_KERNEL("aten::tril.out", tril_out, "TIT");

}  // namespace pteron
