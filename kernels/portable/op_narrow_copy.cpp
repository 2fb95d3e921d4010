// aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *, Tensor(a!) out)
// out = self[..., start:start+length, ...] along dim; a negative start counts from the end.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/narrow.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error narrow_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::narrow_copy.out";
  const Tensor& self = *args[0]->tensor;
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot narrow a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  const int64_t size = self.size(dim);
  int64_t start = args[2]->i;
  const int64_t length = args[3]->i;
  PTERON_CHECK(start >= -size && start <= size, Error::InvalidArgument,
               "%s: start %lld out of range for a dim of size %lld", kOp,
               static_cast<long long>(start), static_cast<long long>(size));
  if (start < 0) start += size;
  PTERON_CHECK(length >= 0 && length <= size - start, Error::InvalidArgument,
               "%s: start %lld + length %lld exceeds the dim's size %lld", kOp,
               static_cast<long long>(start), static_cast<long long>(length),
               static_cast<long long>(size));
  return copy_narrow(kOp, self, dim, start, length, *args[4]->tensor, 4);
}

}  // namespace

PTERON_KERNEL("aten::narrow_copy.out", narrow_copy_out, "TIIIT");

}  // namespace pteron
