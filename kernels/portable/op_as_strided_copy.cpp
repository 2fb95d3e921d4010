// aten::as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride,
//     SymInt? storage_offset=None, *, Tensor(a!) out)
// out = the view of self's storage with the given sizes and element strides (torch.as_strided).
// Strides address torch's storage order, which is self's only when self is row-major: other
// dim orders are refused rather than read differently. Every element the view reaches must lie
// inside self (the program is not trusted).
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error as_strided_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::as_strided_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const Span<const int64_t> size = args[1]->int_list, stride = args[2]->int_list;
  PTERON_CHECK(size.size() == stride.size(), Error::InvalidArgument,
               "%s: %zu sizes but %zu strides", kOp, size.size(), stride.size());
  PTERON_CHECK(size.size() <= static_cast<size_t>(kMaxTensorDim), Error::NotSupported,
               "%s: rank %zu above %d", kOp, size.size(), kMaxTensorDim);
  PTERON_CHECK(self.is_contiguous(), Error::NotSupported,
               "%s: self must be row-major (strides address torch's storage order)", kOp);
  const int64_t offset = args[3]->is_none() ? 0 : args[3]->i;
  PTERON_CHECK(offset >= 0, Error::InvalidArgument, "%s: negative storage_offset %lld", kOp,
               static_cast<long long>(offset));
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  bool empty = false;
  int64_t last = offset;  // the farthest element the view reads
  for (size_t d = 0; d < size.size(); ++d) {
    PTERON_CHECK(size[d] >= 0 && size[d] <= INT32_MAX, Error::InvalidArgument,
                 "%s: size %lld at dim %zu is invalid", kOp, static_cast<long long>(size[d]), d);
    PTERON_CHECK(stride[d] >= 0 && stride[d] <= INT32_MAX, Error::InvalidArgument,
                 "%s: stride %lld at dim %zu is invalid", kOp, static_cast<long long>(stride[d]),
                 d);
    sizes[d] = static_cast<int32_t>(size[d]);
    strides[d] = stride[d];
    if (size[d] == 0) empty = true;
    int64_t reach = 0;
    PTERON_CHECK(!__builtin_mul_overflow(size[d] > 0 ? size[d] - 1 : 0, stride[d], &reach) &&
                     !__builtin_add_overflow(last, reach, &last),
                 Error::InvalidArgument, "%s: the view's extent overflows", kOp);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, static_cast<int32_t>(size.size())));
  if (empty) return Error::Ok;
  PTERON_CHECK(last < self.numel(), Error::InvalidArgument,
               "%s: the view reaches element %lld of a %lld-element self", kOp,
               static_cast<long long>(last), static_cast<long long>(self.numel()));
  copy_view(self, offset, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::as_strided_copy.out", as_strided_copy_out, "TLLiT");

}  // namespace pteron
