// aten::scatter.src_out / .value_out on row-major tensors whose index has self's (and src's)
// sizes outside dim (util/scatter_walk.h): out starts as a copy of self, then the entries are
// written split over threads so that each out element is written by one thread in index
// order (repeated indices: the last write wins, as in the portable kernel). Any dtype; other
// layouts and shapes, and a bad index (for its message), run the portable kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/scatter_walk.h"
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

Error scatter_src_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter.src_out";
  opt::ScatterSrcCall c;
  if (!opt::start_scatter_src(kOp, args, &c)) return call_portable(kOp, ctx, args);
  bool ok = true;
  dispatch_word(c.out->element_size(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    W* dst = c.out->data<W>();
    const W* from = c.src->data<const W>();
    ok = opt::with_index(*c.index, [&](const auto* idx) {
      return opt::scatter_walk(c.g, idx, 2,
                               [dst, from](int64_t o, int64_t s) { dst[o] = from[s]; });
    });
  });
  return ok ? Error::Ok : call_portable(kOp, ctx, args);
}

Error scatter_value_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::scatter.value_out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const ScalarArg value(*args[3]);
  Tensor& out = *args[4]->tensor;
  int32_t dim = 0;
  opt::ScatterGeometry g;
  if (check_scalar_fits_dtype(kOp, value, self.dtype()) != Error::Ok ||
      !opt::start_scatter(kOp, self, args[1]->i, index, nullptr, out, &dim, &g)) {
    return call_portable(kOp, ctx, args);
  }
  bool ok = true;
  const bool known = dispatch_dtype_in<kAllTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = store_value<T>(value.as<typename ComputeType<T>::type>());
    T* dst = out.data<T>();
    ok = opt::with_index(index, [&](const auto* idx) {
      return opt::scatter_walk(g, idx, 2, [dst, v](int64_t o, int64_t) { dst[o] = v; });
    });
  });
  return known && ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::scatter.src_out", scatter_src_out, "TITTT");
PTERON_KERNEL("aten::scatter.value_out", scatter_value_out, "TITST");

}  // namespace pteron::optimized
