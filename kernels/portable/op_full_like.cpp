// aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None,
//                     Tensor(a!) out)
// out (of self's shape; its own dim order) = fill_value converted to out's dtype.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error full_like_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::full_like.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(*args[1]), out.dtype()));
  fill_with_bits(out, scalar_bits(*args[1], out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::full_like.out", full_like_out, "TSiT");

}  // namespace pteron
