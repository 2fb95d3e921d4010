// aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out)
// out = self reversed along each dim in dims (negative dims count from the end; a repeated dim
// is an error, as in torch): a view with negative strides, copied into out's dim order.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error flip_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::flip.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  bool flipped[kMaxTensorDim] = {};
  const int32_t rank = self.dim() == 0 ? 1 : self.dim();  // a 0-d tensor takes dim 0 or -1
  for (const int64_t d : args[1]->int_list) {
    int32_t nd = 0;
    PTERON_TRY(normalize_dim(kOp, d, rank, &nd));
    PTERON_CHECK(!flipped[nd], Error::InvalidArgument, "%s: dim %lld appears multiple times", kOp,
                 static_cast<long long>(d));
    flipped[nd] = true;
  }
  int64_t offset = 0, strides[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) {
    strides[d] = self.stride(d);
    if (flipped[d] && self.size(d) > 0) {
      offset += (self.size(d) - 1) * self.stride(d);
      strides[d] = -self.stride(d);
    }
  }
  copy_view(self, offset, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::flip.out", flip_out, "TLT");

}  // namespace pteron
