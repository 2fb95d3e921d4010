// aten::view_copy.dtype_out(Tensor self, ScalarType dtype, *, Tensor(a!) out)
// out = self's bits reinterpreted as `dtype` (Tensor.view(dtype)). Element sizes must match,
// so each element maps to one element and any dim orders work; views that change the element
// size (and with it the last dim) are refused.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error view_copy_dtype_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::view_copy.dtype_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(args[1]->i == static_cast<int64_t>(out.dtype()), Error::InvalidArgument,
               "%s: dtype %lld does not match out's dtype %s", kOp,
               static_cast<long long>(args[1]->i), scalar_type_name(out.dtype()));
  PTERON_CHECK(is_supported(self.dtype()) && is_supported(out.dtype()), Error::NotSupported,
               "%s: dtypes %s -> %s not supported", kOp, scalar_type_name(self.dtype()),
               scalar_type_name(out.dtype()));
  PTERON_CHECK(self.element_size() == out.element_size(), Error::NotSupported,
               "%s: %s -> %s changes the element size", kOp, scalar_type_name(self.dtype()),
               scalar_type_name(out.dtype()));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (out.numel() == 0) return Error::Ok;
  int64_t sizes[kMaxTensorDim], ss[kMaxTensorDim], ds[kMaxTensorDim];
  tensor_sizes(self, sizes);
  tensor_strides(self, ss);
  tensor_strides(out, ds);
  strided_copy(out.mutable_data(), ds, self.const_data(), ss, sizes, self.dim(),
               self.element_size());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::view_copy.dtype_out", view_copy_dtype_out, "TIT");

}  // namespace pteron
