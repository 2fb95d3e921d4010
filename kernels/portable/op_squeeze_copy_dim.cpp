// aten::squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/squeeze.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error squeeze_copy_dim_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::squeeze_copy.dim_out";
  const Tensor& self = *args[0]->tensor;
  int32_t d = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &d));
  return squeeze_copy(kOp, self, self.dim() == 0 ? 0u : 1u << d, *args[2]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::squeeze_copy.dim_out", squeeze_copy_dim_out, "TIT");

}  // namespace pteron
