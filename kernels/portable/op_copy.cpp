// aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) -> Tensor(a!)
// aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
// (one op: the functional form and the in-place one ExecuTorch emits to write a mutated
// buffer's new value back into the buffer)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = src broadcast to self's shape and converted to self's dtype (the functional form of
// self.copy_(src); self gives only the shape and dtype). The compiler also uses it to write a
// mutated buffer's new value back into the buffer.
Error copy_into(const char* kOp, const Tensor& self, const Tensor& src, Tensor& out) {
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  PTERON_CHECK(src.dim() <= self.dim(), Error::InvalidArgument,
               "%s: src of rank %d does not broadcast to self's rank %d", kOp, src.dim(),
               self.dim());
  for (int32_t d = 0; d < src.dim(); ++d) {
    const int32_t want = self.size(self.dim() - src.dim() + d);
    PTERON_CHECK(src.size(d) == want || src.size(d) == 1, Error::InvalidArgument,
                 "%s: src size %d at dim %d does not broadcast to %d", kOp, src.size(d), d, want);
  }
  if (out.numel() == 0) return Error::Ok;
  int64_t sizes[kMaxTensorDim], src_strides[kMaxTensorDim], out_strides[kMaxTensorDim];
  tensor_sizes(out, sizes);
  tensor_strides(out, out_strides);
  broadcast_strides(src, self.sizes().data(), self.dim(), src_strides);
  PTERON_CHECK(strided_copy_convert(out.mutable_data(), out.dtype(), out_strides, src.const_data(),
                                    src.dtype(), src_strides, sizes, out.dim()),
               Error::NotSupported, "%s: copy from %s to %s not supported", kOp,
               scalar_type_name(src.dtype()), scalar_type_name(out.dtype()));
  return Error::Ok;
}

Error copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::copy.out";
  return copy_into(kOp, *args[0]->tensor, *args[1]->tensor, *args[3]->tensor);
}

// self = src; the last argument is the returned self.
Error copy_in_place(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::copy_";
  Tensor& self = *args[0]->tensor;
  PTERON_CHECK(args[3]->tensor->const_data() == self.const_data(), Error::InvalidArgument,
               "%s: the returned tensor is not self", kOp);
  return copy_into(kOp, self, *args[1]->tensor, self);
}

}  // namespace

PTERON_KERNEL("aten::copy.out", copy_out, "TTBT");
PTERON_KERNEL("aten::copy_", copy_in_place, "TTBT");

}  // namespace pteron
