// aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error expand_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::expand_copy.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const int32_t dim = static_cast<int32_t>(size.size());
  PTERON_CHECK(dim >= self.dim(), Error::InvalidArgument, "%s: %d sizes given for a %d-d tensor",
               kOp, dim, self.dim());
  PTERON_CHECK(dim <= kMaxTensorDim, Error::NotSupported, "%s: rank %d above %d", kOp, dim,
               kMaxTensorDim);
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  const int32_t lead = dim - self.dim();
  for (int32_t i = 0; i < dim; ++i) {
    const int64_t want = size[i];
    if (i < lead) {
      PTERON_CHECK(want >= 0 && want <= INT32_MAX, Error::InvalidArgument,
                   "%s: size %lld not allowed for new leading dim %d", kOp,
                   static_cast<long long>(want), i);
      sizes[i] = static_cast<int32_t>(want);
      strides[i] = 0;
      continue;
    }
    const int32_t have = self.size(i - lead);
    if (want == -1 || want == have) {
      sizes[i] = have;
      strides[i] = self.stride(i - lead);
    } else {
      PTERON_CHECK(have == 1 && want >= 0 && want <= INT32_MAX, Error::InvalidArgument,
                   "%s: cannot expand size %d to %lld at dim %d", kOp, have,
                   static_cast<long long>(want), i);
      sizes[i] = static_cast<int32_t>(want);
      strides[i] = 0;
    }
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, dim));
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::expand_copy.out", expand_copy_out, "TLBT");

}  // namespace pteron
