// aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
// out = condition ? self : other, all three broadcast together. condition must be bool.
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = c ? a : b with bit masks instead of a branch, which on a mask with no pattern
// mispredicts every other element (where(x > 0, x, 0.0) over 1M floats: 4.0 -> 0.74 ms). A step
// of 0 is a broadcast scalar (where(c, x, 0.0)), read once.
template <typename U>
inline U masked(uint8_t c, U a, U b) {
  const U m = static_cast<U>(U(0) - static_cast<U>(c != 0));
  return static_cast<U>((a & m) | (b & ~m));
}

template <typename U>
void select_contiguous(U* __restrict o, const uint8_t* __restrict c, const U* __restrict a,
                       const U* __restrict b, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = masked(c[k], a[k], b[k]);
}

template <typename U, bool kScalarA>
void select_one_scalar(U* __restrict o, const uint8_t* __restrict c, const U* __restrict x, U s,
                       int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = kScalarA ? masked(c[k], s, x[k]) : masked(c[k], x[k], s);
}

// Same dtypes: elements are moved, not converted, so one loop per element size serves all.
void select_same_dtype(const RowPlan<4>& plan, const Tensor& cond, const Tensor& x, const Tensor& y,
                       Tensor& out) {
  dispatch_by_size(out.element_size(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const uint8_t* pc = cond.data<const uint8_t>();  // bytes: see load_value<bool>
    const U* px = x.data<const U>();
    const U* py = y.data<const U>();
    U* po = out.data<U>();
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      U* o = po + off[0];
      const uint8_t* c = pc + off[1];
      const U* a = px + off[2];
      const U* b = py + off[3];
      const bool dense = st[0] == 1 && st[1] == 1;
      if (dense && st[2] == 1 && st[3] == 1) {
        select_contiguous(o, c, a, b, n);
      } else if (dense && st[2] == 1 && st[3] == 0) {
        select_one_scalar<U, false>(o, c, a, *b, n);
      } else if (dense && st[2] == 0 && st[3] == 1) {
        select_one_scalar<U, true>(o, c, b, *a, n);
      } else {
        for (int64_t k = 0; k < n; ++k)
          o[k * st[0]] = masked(c[k * st[1]], a[k * st[2]], b[k * st[3]]);
      }
    });
  });
}

// Mixed dtypes: chunks of self and other go through double and are converted to out's dtype.
void select_mixed_dtypes(const RowPlan<4>& plan, const Tensor& cond, const Tensor& x,
                         const Tensor& y, Tensor& out) {
  const uint8_t* pc = cond.data<const uint8_t>();  // bytes: see load_value<bool>
  for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
    double a[kConvertChunk], b[kConvertChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kConvertChunk) {
      const int64_t m = n - k0 < kConvertChunk ? n - k0 : kConvertChunk;
      convert_elements(x.dtype(), element_ptr(x, off[2] + k0 * st[2]), st[2], ScalarType::Double, a,
                       1, m);
      convert_elements(y.dtype(), element_ptr(y, off[3] + k0 * st[3]), st[3], ScalarType::Double, b,
                       1, m);
      const uint8_t* c = pc + off[1] + k0 * st[1];
      for (int64_t k = 0; k < m; ++k) a[k] = c[k * st[1]] != 0 ? a[k] : b[k];
      convert_elements(ScalarType::Double, a, 1, out.dtype(), element_ptr(out, off[0] + k0 * st[0]),
                       st[0], m);
    }
  });
}

Error where_self_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::where.self_out";
  const Tensor& cond = *args[0]->tensor;
  const Tensor& x = *args[1]->tensor;
  const Tensor& y = *args[2]->tensor;
  Tensor& out = *args[3]->tensor;
  if (cond.dtype() != ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: condition must be bool, got %s", kOp,
                scalar_type_name(cond.dtype()));
  }
  if (!is_supported(x.dtype()) || !is_supported(y.dtype()) || !is_supported(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtypes %s, %s -> %s not supported", kOp,
                scalar_type_name(x.dtype()), scalar_type_name(y.dtype()),
                scalar_type_name(out.dtype()));
  }
  RowPlan<4> plan;
  const Tensor* const inputs[3] = {&cond, &x, &y};
  PTERON_TRY(plan_broadcast_rows<4>(kOp, inputs, out, &plan));
  if (x.dtype() == out.dtype() && y.dtype() == out.dtype()) {
    select_same_dtype(plan, cond, x, y, out);
  } else {
    select_mixed_dtypes(plan, cond, x, y, out);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::where.self_out", where_self_out, "TTTT");

}  // namespace pteron
