// aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/squeeze.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error squeeze_copy_dims_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::squeeze_copy.dims_out";
  const Tensor& self = *args[0]->tensor;
  uint32_t mask = 0;
  for (const int64_t d : args[1]->int_list) {
    int32_t n = 0;
    PTERON_TRY(normalize_dim(kOp, d, self.dim(), &n));
    PTERON_CHECK(!(mask & (1u << n)), Error::InvalidArgument, "%s: dim %d repeated", kOp, n);
    mask |= 1u << n;
  }
  return squeeze_copy(kOp, self, self.dim() == 0 ? 0u : mask, *args[2]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::squeeze_copy.dims_out", squeeze_copy_dims_out, "TLT");

}  // namespace pteron
