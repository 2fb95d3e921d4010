// aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out)
// out (of shape `size`) = fill_value converted to out's dtype.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error full_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::full.out";
  Span<const int64_t> size = args[0]->int_list;
  Tensor& out = *args[2]->tensor;
  if (size.size() > static_cast<size_t>(kMaxTensorDim)) {
    return fail(Error::NotSupported, "%s: rank %zu above %d", kOp, size.size(), kMaxTensorDim);
  }
  int32_t sizes[kMaxTensorDim];
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || size[d] > INT32_MAX) {
      return fail(Error::InvalidArgument, "%s: size %lld at dim %zu is invalid", kOp,
                  static_cast<long long>(size[d]), d);
    }
    sizes[d] = static_cast<int32_t>(size[d]);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, static_cast<int32_t>(size.size())));
  if (!is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(*args[1]), out.dtype()));
  fill_with_bits(out, scalar_bits(*args[1], out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::full.out", full_out, "LST");

}  // namespace pteron
