// aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
// out = mask ? value : self, with self and mask broadcast together; mask must be bool.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error masked_fill_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::masked_fill.Scalar_out";
  PTERON_TRY(check_args(kOp, args, "TTST"));
  const Tensor& self = *args[0]->tensor;
  const Tensor& mask = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  if (mask.dtype() != ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: mask must be bool, got %s", kOp,
                scalar_type_name(mask.dtype()));
  }
  if (!is_supported(self.dtype()) || !is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s -> %s not supported", kOp,
                scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(*args[2]), out.dtype()));
  RowPlan<3> plan;
  PTERON_TRY(plan_binary_rows(kOp, self, mask, out, &plan));
  if (self.dtype() != out.dtype()) {
    const double value = args[2]->scalar_as_double();
    binary_mixed_dtypes(plan, self, mask, out,
                        [value](double x, double m) { return m != 0 ? value : x; });
    return Error::Ok;
  }
  // Same dtype: elements are moved, not converted, so one loop per element size serves all.
  const uint64_t bits = scalar_bits(*args[2], out.dtype());
  dispatch_by_size(out.element_size(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    __builtin_memcpy(&v, &bits, sizeof(U));
    const U* px = self.data<const U>();
    const uint8_t* pm = mask.data<const uint8_t>();  // bytes: see load_value<bool>
    U* po = out.data<U>();
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      U* o = po + off[0];
      const U* x = px + off[1];
      const uint8_t* m = pm + off[2];
      if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
        // Bit masks instead of `m ? v : x`, which GCC does not vectorise.
        for (int64_t k = 0; k < n; ++k) {
          const U mk = static_cast<U>(U(0) - static_cast<U>(m[k] != 0));
          o[k] = static_cast<U>((v & mk) | (x[k] & ~mk));
        }
      } else {
        for (int64_t k = 0; k < n; ++k) o[k * st[0]] = m[k * st[2]] != 0 ? v : x[k * st[1]];
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::masked_fill.Scalar_out", masked_fill_scalar_out);

}  // namespace pteron
