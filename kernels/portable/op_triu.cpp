// aten::triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out)
// out = the upper triangle of each matrix in the last two dims (row i, column j kept unless
// j - i < diagonal), the rest zero. Any dim orders.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/triangle.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error triu_out(KernelContext&, Span<EValue*> args) {
  return triangle_out("aten::triu.out", args, /*lower=*/false);
}

}  // namespace

PTERON_KERNEL("aten::triu.out", triu_out, "TIT");

}  // namespace pteron
