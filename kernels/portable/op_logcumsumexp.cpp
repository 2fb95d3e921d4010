// aten::logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out)
// out[k] = log(sum_{i <= k} exp(self[i])) along dim, computed stably (max + log1p(exp(-|d|)))
// in double; -inf terms add nothing, +inf wins, NaN propagates. Floating dtypes.
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/line_scan.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

double log_add_exp(double a, double b) {
  if (a != a || b != b) return NAN;
  const double m = a > b ? a : b;
  if (std::isinf(m)) return m;  // both -inf, or one +inf
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

Error logcumsumexp_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::logcumsumexp.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(is_floating(self.dtype()) && out.dtype() == self.dtype(), Error::NotSupported,
               "%s: needs a floating self and an out of its dtype, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim() == 0 ? 1 : self.dim(), &dim));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (self.numel() == 0) return Error::Ok;
  const int64_t len = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t si = self.dim() == 0 ? 0 : self.stride(dim);
  const int64_t so = self.dim() == 0 ? 0 : out.stride(dim);
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    T* y = out.data<T>();
    const Tensor* ts[2] = {&self, &out};
    for_each_line<2>(ts, self.dim() == 0 ? -1 : dim, [&](const int64_t* off) {
      double acc = -INFINITY;
      for (int64_t k = 0; k < len; ++k) {
        acc = log_add_exp(acc, static_cast<double>(load_value(x[off[0] + k * si])));
        y[off[1] + k * so] = store_value<T>(acc);
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::logcumsumexp.out", logcumsumexp_out, "TIT");

}  // namespace pteron
