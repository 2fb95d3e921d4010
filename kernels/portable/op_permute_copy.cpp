// aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error permute_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::permute_copy.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> dims = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(static_cast<int32_t>(dims.size()) == self.dim(), Error::InvalidArgument,
               "%s: %zu dims given for a %d-d tensor", kOp, dims.size(), self.dim());
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  uint32_t seen = 0;
  for (int32_t i = 0; i < self.dim(); ++i) {
    int32_t d = 0;
    PTERON_TRY(normalize_dim(kOp, dims[i], self.dim(), &d));
    PTERON_CHECK(!(seen & (1u << d)), Error::InvalidArgument, "%s: dim %d repeated", kOp, d);
    seen |= 1u << d;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::permute_copy.out", permute_copy_out, "TLT");

}  // namespace pteron
