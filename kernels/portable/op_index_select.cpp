// aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out.select(dim, i) = self.select(dim, index[i]): one strided block copy per index, which is a
// single memcpy per row when dim is outermost in both layouts (the embedding-like case).
Error index_select_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::index_select.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_index_dtype(kOp, index, "index", true));
  PTERON_CHECK(index.dim() <= 1, Error::InvalidArgument, "%s: index must be 0-d or 1-d, got %d-d",
               kOp, index.dim());
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  if (self.dim() == 0) {  // a 0-d self is indexed as a 1-element vector
    PTERON_CHECK(index.numel() == 1, Error::InvalidArgument,
                 "%s: index of a 0-d tensor must have one element, got %lld", kOp,
                 static_cast<long long>(index.numel()));
    PTERON_TRY(check_indices(kOp, index, 1, 0, false));
    PTERON_TRY(expect_out_shape(kOp, out, nullptr, 0));
    copy_logical_order(self, out);
    return Error::Ok;
  }
  const int64_t count = index.numel();
  PTERON_TRY(check_indices(kOp, index, self.size(dim), dim, false));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d)
    sizes[d] = d == dim ? static_cast<int32_t>(count) : self.size(d);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  if (out.numel() == 0) return Error::Ok;

  // The block self.select(dim, i): every dim but `dim`, with both sides' strides.
  int64_t block[kMaxTensorDim], ss[kMaxTensorDim], ds[kMaxTensorDim];
  int32_t n = 0;
  for (int32_t d = 0; d < self.dim(); ++d, ++n) {
    block[n] = d == dim ? 1 : self.size(d);
    ss[n] = self.stride(d);
    ds[n] = out.stride(d);
  }
  const int64_t index_stride = index.dim() == 1 ? index.stride(0) : 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t src = load_index(index, i * index_stride);
    strided_copy(byte_ptr(out, i * out.stride(dim)), ds, byte_ptr(self, src * self.stride(dim)), ss,
                 block, n, self.element_size());
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index_select.out", index_select_out, "TITT");

}  // namespace pteron
