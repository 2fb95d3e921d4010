// aten::adaptive_avg_pool1d.out(Tensor self, int[1] output_size, *, Tensor(a!) out)
// Output cell i of an L -> m row averages [floor(i * L / m), ceil((i + 1) * L / m)), as torch.
// Core ATen, so an undecomposed export keeps it.
#include "kernels/portable/util/pool.h"
#include "kernels/portable/util/pool1d.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::adaptive_avg_pool1d.out";

Error adaptive_avg_pool1d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_pool1d(kOp, self, out));
  PTERON_CHECK(args[1]->int_list.size() == 1, Error::InvalidArgument,
               "%s: output_size must have 1 value, got %zu", kOp, args[1]->int_list.size());
  const int64_t m = args[1]->int_list[0];
  const int64_t L = self.size(self.dim() - 1);
  return for_each_pool1d_row(kOp, self, out, m, [&](auto* x, int64_t xs, auto* y, int64_t ys) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    using Acc = typename ComputeType<T>::type;
    for (int64_t o = 0; o < m; ++o) {
      const AdaptiveWindow win = adaptive_window(o, m, L);
      Acc sum = 0;
      for (int64_t i = win.begin; i < win.end; ++i) sum += load_value(x[i * xs]);
      y[o * ys] = store_value<T>(sum / static_cast<Acc>(win.end - win.begin));
    }
  });
}

}  // namespace

PTERON_KERNEL("aten::adaptive_avg_pool1d.out", adaptive_avg_pool1d_out, "TLT");

}  // namespace pteron
