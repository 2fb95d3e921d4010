// aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out)
// out = src broadcast to self's shape and converted to self's dtype (the functional form of
// self.copy_(src)); self's values are not read. Any dim orders.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::copy.out";
  PTERON_TRY(check_args(kOp, args, "TTBT"));
  const Tensor& self = *args[0]->tensor;
  const Tensor& src = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  // src must broadcast to self's shape (and not the other way round).
  const Tensor* ts[2] = {&self, &src};
  int32_t sizes[kMaxTensorDim];
  int32_t dim = 0;
  PTERON_TRY(broadcast_shapes(kOp, Span<const Tensor* const>(ts, 2), sizes, &dim));
  PTERON_CHECK(dim == self.dim(), Error::InvalidArgument,
               "%s: src of rank %d does not broadcast to self of rank %d", kOp,
               static_cast<int>(src.dim()), static_cast<int>(self.dim()));
  for (int32_t d = 0; d < dim; ++d) {
    PTERON_CHECK(sizes[d] == self.size(d), Error::InvalidArgument,
                 "%s: src does not broadcast to self's shape at dim %d", kOp, static_cast<int>(d));
  }
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (out.numel() == 0) return Error::Ok;
  int64_t ss[kMaxTensorDim], ds[kMaxTensorDim], n[kMaxTensorDim];
  broadcast_strides(src, out.sizes().data(), out.dim(), ss);
  tensor_strides(out, ds);
  tensor_sizes(out, n);
  if (!strided_copy_convert(out.mutable_data(), out.dtype(), ds, src.const_data(), src.dtype(), ss,
                            n, out.dim())) {
    return fail(Error::NotSupported, "%s: dtypes %s -> %s not supported", kOp,
                scalar_type_name(src.dtype()), scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::copy.out", copy_out);

}  // namespace pteron
