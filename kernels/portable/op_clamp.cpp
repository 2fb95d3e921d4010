// aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
// aten::clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out)
//
// out = min(max(self, min), max), so min > max gives max (as torch). NaN in self propagates;
// a NaN bound gives NaN. At least one bound must be given.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/ternary.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename C>
C clamp_below(C x, C lo) {
  if constexpr (std::is_floating_point_v<C>) {
    if (lo != lo) return lo;
  }
  return x < lo ? lo : x;
}

template <typename C>
C clamp_above(C x, C hi) {
  if constexpr (std::is_floating_point_v<C>) {
    if (hi != hi) return hi;
  }
  return x > hi ? hi : x;
}

Error no_bounds(const char* op) {
  return fail(Error::InvalidArgument, "%s: at least one of min and max must be given", op);
}

Error clamp_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::clamp.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  const bool has_min = !args[1]->is_none(), has_max = !args[2]->is_none();
  if (!has_min && !has_max) return no_bounds(kOp);
  const ScalarArg lo(has_min ? *args[1] : EValue()), hi(has_max ? *args[2] : EValue());
  if (has_min) PTERON_TRY(check_scalar_fits_out(kOp, lo, out));
  if (has_max) PTERON_TRY(check_scalar_fits_out(kOp, hi, out));
  if (has_min && has_max) {
    return unary_elementwise<kRealTypes, kRealTypes>(kOp, self, out, [=](auto x) {
      using C = decltype(x);
      return clamp_above(clamp_below(x, lo.as<C>()), hi.as<C>());
    });
  }
  if (has_min) {
    return unary_elementwise<kRealTypes, kRealTypes>(
        kOp, self, out, [=](auto x) { return clamp_below(x, lo.as<decltype(x)>()); });
  }
  return unary_elementwise<kRealTypes, kRealTypes>(
      kOp, self, out, [=](auto x) { return clamp_above(x, hi.as<decltype(x)>()); });
}

Error clamp_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::clamp.Tensor_out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  const Tensor* lo = args[1]->is_none() ? nullptr : args[1]->tensor;
  const Tensor* hi = args[2]->is_none() ? nullptr : args[2]->tensor;
  if (lo && hi) {
    return ternary_elementwise<kRealTypes>(kOp, self, *lo, *hi, out, [](auto x, auto l, auto h) {
      return clamp_above(clamp_below(x, l), h);
    });
  }
  // One bound alone takes bool too (torch's clamp_min/clamp_max do; clamp with both does not).
  if (lo) {
    return binary_elementwise(kOp, self, *lo, out, kAllTypes,
                              [](auto x, auto l) { return clamp_below(x, l); });
  }
  if (hi) {
    return binary_elementwise(kOp, self, *hi, out, kAllTypes,
                              [](auto x, auto h) { return clamp_above(x, h); });
  }
  return no_bounds(kOp);
}

}  // namespace

PTERON_KERNEL("aten::clamp.out", clamp_out, "TssT");
PTERON_KERNEL("aten::clamp.Tensor_out", clamp_tensor_out, "TttT");

}  // namespace pteron
