// aten::gather.out, row-major tensors of any dtype (elements move as words) whose index has
// self's sizes outside dim: rows of index split over threads, indices range-checked as they
// are read. Other layouts and shapes, and a bad index (for its message), run the portable
// kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/scatter_walk.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

Error gather_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::gather.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  Tensor& out = *args[4]->tensor;
  const int32_t rank = self.dim();
  const int64_t dim = args[1]->i < 0 ? args[1]->i + rank : args[1]->i;
  opt::ScatterGeometry g;
  if (index.numel() == 0 || out.dtype() != self.dtype() || dim < 0 || dim >= rank ||
      !opt::scatter_geometry(self, index, nullptr, static_cast<int32_t>(dim), &g) ||
      expect_out_shape(kOp, out, index.sizes().data(), index.dim()) != Error::Ok ||
      !is_row_major(out)) {
    return call_portable(kOp, ctx, args);
  }
  bool ok = true;
  dispatch_word(self.element_size(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    ok = opt::with_index(index, [&](const auto* idx) {
      return opt::gather_walk(g, idx, self.data<const W>(), out.data<W>());
    });
  });
  return ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::gather.out", gather_out, "TITBT");

}  // namespace pteron::optimized
