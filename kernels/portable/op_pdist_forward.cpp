// aten::_pdist_forward.out(Tensor self, float p=2., *, Tensor(a!) out)
// out = ||self[i] - self[j]||_p for every row pair i < j of the 2-D self, in row-major pair
// order (N * (N - 1) / 2 values). Floating dtypes, p >= 0.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/pdistance.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error pdist_forward_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_pdist_forward.out";
  const Tensor& self = *args[0]->tensor;
  const double p = args[1]->d;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(self.dim() == 2, Error::InvalidArgument, "%s: self must be 2-D, got %d dims", kOp,
               static_cast<int>(self.dim()));
  PTERON_CHECK(p >= 0, Error::InvalidArgument, "%s: p must be >= 0, got %g", kOp, p);
  PTERON_CHECK(is_floating(self.dtype()) && out.dtype() == self.dtype(), Error::NotSupported,
               "%s: needs a floating self and an out of its dtype, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  const int64_t n = self.size(0), m = self.size(1);
  const int64_t pairs = n * (n - 1) / 2;
  PTERON_CHECK(pairs <= INT32_MAX, Error::NotSupported, "%s: %lld rows give too many pairs", kOp,
               static_cast<long long>(n));
  const int32_t size = static_cast<int32_t>(n > 1 ? pairs : 0);
  PTERON_TRY(expect_out_shape(kOp, out, &size, 1));
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    T* y = out.data<T>();
    const int64_t rs = self.stride(0), cs = self.stride(1), os = out.dim() ? out.stride(0) : 1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j, ++k)
        y[k * os] = store_value<T>(pnorm_distance(x + i * rs, cs, x + j * rs, cs, m, p));
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_pdist_forward.out", pdist_forward_out, "TDT");

}  // namespace pteron
