// aten::histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out)
//     -> Tensor(a!)
// A histogram of every element of self in `bins` equal bins over [min, max] (the data's min and
// max when min == max; widened by 1 either side when those are equal too); elements outside the
// range and NaN are not counted. As ATen's CPU kernel (LINEAR_INTERPOLATION): the bin is
// (x - lo) * bins / (hi - lo) truncated, computed in self's dtype (float16 and bfloat16 rounding
// after each operation, as c10::Half arithmetic does), the last bin closed. Counts are exact
// and rounded to self's dtype once: torch adds 1s in float16 / bfloat16 per thread (a bin stops
// growing at 2048 / 256 within one thread's share, which depends on its thread count).
// Float dtypes only, as torch.
#include <cmath>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// A value of T's compute type rounded to T (a no-op for float and double).
template <typename T>
typename ComputeType<T>::type in_dtype(typename ComputeType<T>::type v) {
  return load_value(store_value<T>(v));
}

Error histc_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::histc.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t bins = args[1]->i;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(bins > 0 && bins <= (int64_t{1} << 31) - 1, Error::InvalidArgument,
               "%s: bins must be > 0, got %lld", kOp, static_cast<long long>(bins));
  PTERON_CHECK(is_floating(self.dtype()), Error::NotSupported,
               "%s: dtype %s not supported (torch.histc takes floating point)", kOp,
               scalar_type_name(self.dtype()));
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const int32_t size = static_cast<int32_t>(bins);
  PTERON_TRY(expect_out_shape(kOp, out, &size, 1));
  double lo = ScalarArg(*args[2]).d, hi = ScalarArg(*args[3]).d;
  const int64_t n = self.numel();
  bool ok = dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const T* x = self.data<const T>();  // dense: the element order does not matter
    if (lo == hi && n > 0) {            // the data's range; NaN propagates as aminmax's
      C mn = load_value(x[0]), mx = mn;
      bool nan = mn != mn;
      for (int64_t i = 1; i < n; ++i) {
        const C v = load_value(x[i]);
        nan = nan || v != v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
      }
      lo = nan ? NAN : static_cast<double>(mn);
      hi = nan ? NAN : static_cast<double>(mx);
    }
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(self.dtype()));
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  PTERON_CHECK(std::isfinite(lo) && std::isfinite(hi), Error::InvalidArgument,
               "%s: range of [%g, %g] is not finite", kOp, lo, hi);
  PTERON_CHECK(lo < hi, Error::InvalidArgument, "%s: max must be larger than min", kOp);
  auto* counts =
      static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * bins, alignof(int64_t)));
  PTERON_CHECK(counts != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld bins", kOp,
               static_cast<long long>(bins));
  for (int64_t b = 0; b < bins; ++b) counts[b] = 0;
  bool empty_range = false;
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const T* x = self.data<const T>();
    T* h = out.data<T>();
    const C left = in_dtype<T>(static_cast<C>(lo)), right = in_dtype<T>(static_cast<C>(hi));
    const C width = in_dtype<T>(right - left);
    const C count = in_dtype<T>(static_cast<C>(bins));
    // [min, max] rounded to the dtype may be empty or overflow (float16 / bfloat16).
    if (!(width > C(0)) || !(width - width == C(0))) {
      empty_range = true;
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const C v = load_value(x[i]);
      if (!(v >= left && v <= right)) continue;
      const C scaled = in_dtype<T>(in_dtype<T>(v - left) * count);
      // >= 0; +inf when the product overflows the dtype: the last bin, never a cast of inf.
      const C q = in_dtype<T>(scaled / width);
      // the last bin includes its right edge
      const int64_t pos = q >= count ? bins - 1 : static_cast<int64_t>(q);
      ++counts[pos];
    }
    for (int64_t b = 0; b < bins; ++b) h[b] = store_value<T>(static_cast<C>(counts[b]));
  });
  PTERON_CHECK(!empty_range, Error::InvalidArgument,
               "%s: range of [%g, %g] is empty or not finite in %s", kOp, lo, hi,
               scalar_type_name(self.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::histc.out", histc_out, "TISST");

}  // namespace pteron
