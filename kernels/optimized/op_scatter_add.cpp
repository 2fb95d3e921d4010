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
  opt::ScatterSrcCall c;
  if (!opt::start_scatter_src(kOp, args, &c)) return call_portable(kOp, ctx, args);
  bool ok = true;
  const bool known = dispatch_dtype_in<kAllTypes>(c.out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    T* dst = c.out->data<T>();
    const T* from = c.src->data<const T>();
    ok = opt::with_index(*c.index, [&](const auto* idx) {
      return opt::scatter_walk(c.g, idx, 4, [dst, from](int64_t o, int64_t s) {
        dst[o] = store_value<T>(wrapping_add<C>(load_value(dst[o]), load_value(from[s])));
      });
    });
  });
  return known && ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::scatter_add.out", scatter_add_out, "TITTT");

}  // namespace pteron::optimized
