// aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out)
// aten::masked_fill.Tensor_out(Tensor self, Tensor mask, Tensor value, *, Tensor(a!) out)
// out = mask ? value : self, with self and mask broadcast together; mask must be bool. The
// Tensor form takes a 0-d value (as torch requires).
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error masked_fill(const char* kOp, const Tensor& self, const Tensor& mask, const EValue& value,
                  Tensor& out) {
  if (mask.dtype() != ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: mask must be bool, got %s", kOp,
                scalar_type_name(mask.dtype()));
  }
  if (!is_supported(self.dtype()) || !is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s -> %s not supported", kOp,
                scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  }
  PTERON_TRY(check_scalar_fits_dtype(kOp, ScalarArg(value), out.dtype()));
  RowPlan<3> plan;
  PTERON_TRY(plan_binary_rows(kOp, self, mask, out, &plan));
  if (self.dtype() != out.dtype()) {
    const double v = value.scalar_as_double();
    binary_mixed_dtypes(plan, self, mask, out, [v](double x, double m) { return m != 0 ? v : x; });
    return Error::Ok;
  }
  // Same dtype: elements are moved, not converted, so one loop per element size serves all.
  const uint64_t bits = scalar_bits(value, out.dtype());
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

Error masked_fill_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::masked_fill.Scalar_out";
  return masked_fill(kOp, *args[0]->tensor, *args[1]->tensor, *args[2], *args[3]->tensor);
}

Error masked_fill_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::masked_fill.Tensor_out";
  const Tensor& value = *args[2]->tensor;
  PTERON_CHECK(value.dim() == 0, Error::InvalidArgument,
               "%s: value must be a 0-d tensor, got %d dims", kOp, value.dim());
  PTERON_CHECK(is_supported(value.dtype()), Error::NotSupported, "%s: value dtype %s not supported",
               kOp, scalar_type_name(value.dtype()));
  // The value as a Scalar of its own kind, so int64 values stay exact.
  EValue v;
  if (is_floating(value.dtype())) {
    v = EValue::from_double(load_as_double(value, 0));
  } else if (value.dtype() == ScalarType::Bool) {
    v = EValue::from_bool(load_value(*value.data<const bool>()));
  } else {
    int64_t i = 0;
    convert_elements(value.dtype(), value.const_data(), 1, ScalarType::Long, &i, 1, 1);
    v = EValue::from_int(i);
  }
  return masked_fill(kOp, *args[0]->tensor, *args[1]->tensor, v, *args[3]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::masked_fill.Scalar_out", masked_fill_scalar_out, "TTST");
PTERON_KERNEL("aten::masked_fill.Tensor_out", masked_fill_tensor_out, "TTTT");

}  // namespace pteron
