// aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/fill.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// pad holds (before, after) pairs starting from the last dim. Negative pads crop.
Error constant_pad_nd_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::constant_pad_nd.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> pad = args[1]->int_list;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(pad.size() % 2 == 0, Error::InvalidArgument, "%s: pad length %zu must be even", kOp,
               pad.size());
  PTERON_CHECK(pad.size() / 2 <= static_cast<size_t>(self.dim()), Error::InvalidArgument,
               "%s: pad length %zu too long for a %d-d tensor", kOp, pad.size(), self.dim());
  int32_t sizes[kMaxTensorDim];
  int64_t copy_sizes[kMaxTensorDim], src_offset = 0;
  for (int32_t d = 0; d < self.dim(); ++d) {
    const int32_t p = self.dim() - 1 - d;  // pair index for this dim
    const int64_t before = static_cast<size_t>(p) < pad.size() / 2 ? pad[2 * p] : 0;
    const int64_t after = static_cast<size_t>(p) < pad.size() / 2 ? pad[2 * p + 1] : 0;
    PTERON_CHECK(before > -(int64_t{1} << 40) && before < (int64_t{1} << 40) &&
                     after > -(int64_t{1} << 40) && after < (int64_t{1} << 40),
                 Error::InvalidArgument, "%s: pad out of range at dim %d", kOp, d);
    const int64_t size = self.size(d) + before + after;
    PTERON_CHECK(size >= 0 && size <= INT32_MAX, Error::InvalidArgument,
                 "%s: padding dim %d of size %d by (%lld, %lld) gives size %lld", kOp, d,
                 self.size(d), static_cast<long long>(before), static_cast<long long>(after),
                 static_cast<long long>(size));
    sizes[d] = static_cast<int32_t>(size);
    // The part of self that survives cropping, and where it lands in out.
    const int64_t crop_before = before < 0 ? -before : 0;
    const int64_t crop_after = after < 0 ? -after : 0;
    const int64_t kept = self.size(d) - crop_before - crop_after;
    copy_sizes[d] = kept > 0 ? kept : 0;
    src_offset += crop_before * self.stride(d);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  int64_t dst_offset = 0;  // out's strides are final only after expect_out_shape
  for (int32_t d = 0; d < self.dim(); ++d) {
    const int32_t p = self.dim() - 1 - d;
    const int64_t before = static_cast<size_t>(p) < pad.size() / 2 ? pad[2 * p] : 0;
    dst_offset += (before > 0 ? before : 0) * out.stride(d);
  }
  PTERON_TRY(fill_scalar(kOp, out, *args[2]));
  int64_t copy_count = 1;
  for (int32_t d = 0; d < self.dim(); ++d) copy_count *= copy_sizes[d];
  if (copy_count == 0) return Error::Ok;
  int64_t ss[kMaxTensorDim], ds[kMaxTensorDim];
  tensor_strides(self, ss);
  tensor_strides(out, ds);
  strided_copy(byte_ptr(out, dst_offset), ds, byte_ptr(self, src_offset), ss, copy_sizes,
               self.dim(), self.element_size());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::constant_pad_nd.out", constant_pad_nd_out, "TLST");

}  // namespace pteron
