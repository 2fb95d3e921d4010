// aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out)
// out is 0-d and holds s converted to out's dtype.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error scalar_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scalar_tensor.out";
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_out_shape(kOp, out, nullptr, 0));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(*args[0]), out.dtype()));
  fill_with_bits(out, scalar_bits(*args[0], out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::scalar_tensor.out", scalar_tensor_out, "ST");

}  // namespace pteron
