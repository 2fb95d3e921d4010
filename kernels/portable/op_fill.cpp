// aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out)
// aten::fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out)
// out (of self's shape) = value converted to out's dtype; a Tensor value must be 0-d.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error check_out(const char* op, const Tensor& self, Tensor& out) {
  PTERON_TRY(expect_out_shape(op, out, self.sizes().data(), self.dim()));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

Error fill_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::fill.Scalar_out";
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_out(kOp, *args[0]->tensor, out));
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(*args[1]), out.dtype()));
  fill_with_bits(out, scalar_bits(*args[1], out.dtype()));
  return Error::Ok;
}

Error fill_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::fill.Tensor_out";
  const Tensor& value = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  if (value.dim() != 0) {
    return fail(Error::InvalidArgument, "%s: value must be a 0-d tensor, got %d dims", kOp,
                value.dim());
  }
  PTERON_TRY(check_out(kOp, *args[0]->tensor, out));
  uint64_t bits = 0;
  if (!convert_elements(value.dtype(), value.const_data(), 1, out.dtype(), &bits, 1, 1)) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(value.dtype()));
  }
  fill_with_bits(out, bits);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::fill.Scalar_out", fill_scalar_out, "TST");
PTERON_KERNEL("aten::fill.Tensor_out", fill_tensor_out, "TTT");

}  // namespace pteron
