// aten::avg_pool1d.out(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0],
//     bool ceil_mode=False, bool count_include_pad=True, *, Tensor(a!) out)
// Mean of each window along the last dim; the divisor is the window clipped to the padded input
// (count_include_pad) or to the input itself, as torch. Core ATen, so an undecomposed export
// keeps it.
#include <algorithm>

#include "kernels/portable/util/pool1d.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::avg_pool1d.out";

Error read_one(const EValue& e, const char* name, int64_t min_value, int64_t fallback, int64_t* v) {
  if (e.int_list.empty() && fallback >= 0) {
    *v = fallback;
    return Error::Ok;
  }
  PTERON_CHECK(e.int_list.size() == 1, Error::InvalidArgument, "%s: %s must have 1 value, got %zu",
               kOp, name, e.int_list.size());
  *v = e.int_list[0];
  PTERON_CHECK(*v >= min_value && *v <= INT32_MAX, Error::InvalidArgument,
               "%s: %s must be in [%lld, 2^31), got %lld", kOp, name,
               static_cast<long long>(min_value), static_cast<long long>(*v));
  return Error::Ok;
}

Error avg_pool1d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  PTERON_TRY(check_pool1d(kOp, self, out));
  int64_t k = 0, s = 0, p = 0;
  PTERON_TRY(read_one(*args[1], "kernel_size", 1, -1, &k));
  PTERON_TRY(read_one(*args[2], "stride", 1, k, &s));
  PTERON_TRY(read_one(*args[3], "padding", 0, 0, &p));
  PTERON_CHECK(p <= k / 2, Error::InvalidArgument, "%s: pad should be at most half of kernel size",
               kOp);
  const bool ceil_mode = args[4]->b, count_include_pad = args[5]->b;
  const int64_t L = self.size(self.dim() - 1);
  // torch's pooling_output_shape (dilation 1).
  const int64_t num = L + 2 * p - k + (ceil_mode ? s - 1 : 0);
  int64_t out_len = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out_len - 1) * s >= L + p) --out_len;
  return for_each_pool1d_row(
      kOp, self, out, out_len, [&](auto* x, int64_t xs, auto* y, int64_t ys) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
        using Acc = typename ComputeType<T>::type;
        for (int64_t o = 0; o < out_len; ++o) {
          int64_t lo = o * s - p;
          int64_t hi = std::min(lo + k, L + p);
          const int64_t padded = hi - lo;
          lo = std::max<int64_t>(lo, 0);
          hi = std::min(hi, L);
          Acc sum = 0;
          for (int64_t i = lo; i < hi; ++i) sum += load_value(x[i * xs]);
          const int64_t divisor = count_include_pad ? padded : hi - lo;
          y[o * ys] = store_value<T>(hi > lo ? sum / static_cast<Acc>(divisor) : Acc(0));
        }
      });
}

}  // namespace

PTERON_KERNEL("aten::avg_pool1d.out", avg_pool1d_out, "TLLLBBT");

}  // namespace pteron
