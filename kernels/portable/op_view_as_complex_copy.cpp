// aten::view_as_complex_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// A real tensor [.., 2] (real, imaginary) as complex [..]: float32 -> complex64, float64 ->
// complex128. As torch's view, self's last dim must have stride 1 and its other strides and
// offset must step whole complex elements (even). The inverse of view_as_real_copy; Llama's
// reference RoPE turns query and key pairs into complex numbers with it.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::view_as_complex_copy.out";

Error view_as_complex_copy_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
               Error::InvalidArgument, "%s: self must be float32 or float64, got %s", kOp,
               scalar_type_name(self.dtype()));
  PTERON_CHECK(
      self.dim() >= 1 && self.size(self.dim() - 1) == 2 && self.stride(self.dim() - 1) == 1,
      Error::InvalidArgument, "%s: self's last dim must have size 2 and stride 1", kOp);
  const ScalarType want =
      self.dtype() == ScalarType::Float ? ScalarType::ComplexFloat : ScalarType::ComplexDouble;
  PTERON_TRY(expect_dtype(kOp, out, want, "out"));
  const int32_t dim = self.dim() - 1;
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), dim));
  // self's strides in complex elements (out's element size).
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < dim; ++d) {
    PTERON_CHECK(self.stride(d) % 2 == 0 || self.size(d) == 1, Error::InvalidArgument,
                 "%s: self's stride %d is odd", kOp, static_cast<int>(self.stride(d)));
    strides[d] = self.stride(d) / 2;
  }
  copy_view(self, 0, strides, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::view_as_complex_copy.out", view_as_complex_copy_out, "TT");

}  // namespace pteron
