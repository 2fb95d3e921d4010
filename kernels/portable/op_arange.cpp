// aten::arange.out(Scalar end, *, Tensor(a!) out)
// aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)
//
// Follows torch's CPU arange exactly: start/end/step are read in the out dtype's accumulate
// type (int64 for integers, double for float32/64, float for float16/bfloat16), the length is
// ceil((end - start) / step) in double (in int64 arithmetic for an int64 out), and element i is
// start + step * i in the accumulate type. out must be 1-d with that length.
#include <cmath>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename T>
using AccType = std::conditional_t<
    std::is_integral_v<T>, int64_t,
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, double>>;

Error arange(const char* op, const EValue& start_v, const EValue& end_v, const EValue& step_v,
             Tensor& out) {
  const ScalarArg start_s(start_v), end_s(end_v), step_s(step_v);
  Error err = Error::Ok;
  const bool ok = dispatch_dtype_in<kRealTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccType<T>;
    const A start = start_s.as<A>(), end = end_s.as<A>(), step = step_s.as<A>();
    if (!(step > 0 || step < 0)) {
      err = fail(Error::InvalidArgument, "%s: step must be nonzero", op);
      return;
    }
    if (!std::isfinite(static_cast<double>(start)) || !std::isfinite(static_cast<double>(end))) {
      err = fail(Error::InvalidArgument, "%s: unsupported range %g -> %g", op,
                 static_cast<double>(start), static_cast<double>(end));
      return;
    }
    if (!((step > 0 && end >= start) || (step < 0 && end <= start))) {
      err = fail(Error::InvalidArgument,
                 "%s: upper bound and lower bound inconsistent with step sign", op);
      return;
    }
    double size_d;
    if constexpr (std::is_same_v<T, int64_t>) {
      const int64_t sgn = (step > 0) - (step < 0);
      size_d = static_cast<double>((end - start + step - sgn) / step);
    } else {
      size_d = std::ceil((end_s.d - start_s.d) / step_s.d);
    }
    if (!(size_d >= 0 && size_d <= static_cast<double>(INT32_MAX))) {
      err = fail(Error::InvalidArgument, "%s: invalid length %g", op, size_d);
      return;
    }
    const int32_t size = static_cast<int32_t>(size_d);
    err = expect_out_shape(op, out, &size, 1);
    if (err != Error::Ok) return;
    T* p = out.data<T>();
    for (int32_t i = 0; i < size; ++i) p[i] = store_value<T>(start + step * static_cast<A>(i));
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(out.dtype()));
  }
  return err;
}

Error arange_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::arange.out";
  return arange(kOp, EValue::from_int(0), *args[0], EValue::from_int(1), *args[1]->tensor);
}

Error arange_start_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::arange.start_out";
  return arange(kOp, *args[0], *args[1], *args[2], *args[3]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::arange.out", arange_out, "ST");
PTERON_KERNEL("aten::arange.start_out", arange_start_out, "SSST");

}  // namespace pteron
