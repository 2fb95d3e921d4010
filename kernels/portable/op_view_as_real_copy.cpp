// aten::view_as_real_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// A complex tensor [..] as its real parts [.., 2] (real, imaginary) in the part's dtype
// (complex64 -> float32). Self and out may have any dim orders: self is read as a strided view
// whose last dim steps over the two parts of one element.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error view_as_real_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::view_as_real_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(is_complex(self.dtype()), Error::InvalidArgument, "%s: self must be complex, got %s",
               kOp, scalar_type_name(self.dtype()));
  PTERON_CHECK(self.dim() < kMaxTensorDim, Error::InvalidArgument, "%s: self has rank %d", kOp,
               static_cast<int>(self.dim()));
  PTERON_TRY(expect_dtype(kOp, out, complex_part_type(self.dtype()), "out"));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  sizes[self.dim()] = 2;
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim() + 1));
  // self's strides in parts: twice its element strides, then 1 between real and imaginary.
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) strides[d] = 2 * static_cast<int64_t>(self.stride(d));
  strides[self.dim()] = 1;
  copy_view(self, 0, strides, out);  // offsets and strides in out's element size (one part)
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::view_as_real_copy.out", view_as_real_copy_out, "TT");

}  // namespace pteron
