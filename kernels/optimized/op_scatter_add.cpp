// aten::scatter_add.out on row-major tensors whose index has self's and src's sizes outside dim
// (util/scatter_walk.h): out starts as a copy of self, then src is added in, split over threads
// so that each out element's additions run on one thread in index order: the portable kernel's
// sums, rounded the same (bit-identical). Every dtype the portable kernel takes; other layouts
// and shapes, and a bad index (for its message), run the portable kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/scatter_walk.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

Error scatter_add_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter_add.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  Tensor& out = *args[4]->tensor;
  int32_t dim = 0;
  opt::ScatterGeometry g;
  if (!opt::start_scatter(kOp, self, args[1]->i, index, &src, out, &dim, &g)) {
    return call_portable(kOp, ctx, args);
  }
  bool ok = true;
  const bool known = dispatch_dtype_in<kAllTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    T* dst = out.data<T>();
    const T* from = src.data<const T>();
    ok = opt::with_index(index, [&](const auto* idx) {
      return opt::scatter_walk(g, idx, 4, [dst, from](int64_t o, int64_t s) {
        dst[o] = store_value<T>(wrapping_add<C>(load_value(dst[o]), load_value(from[s])));
      });
    });
  });
  return known && ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::scatter_add.out", scatter_add_out, "TITTT");

}  // namespace pteron::optimized
