// aten::scatter_reduce.two_out (sum, prod, mean, amax, amin; with or without self) on row-major
// tensors whose index has self's and src's sizes outside dim (util/scatter_walk.h): out starts
// as a copy of self, then src is reduced in with the portable kernel's reductions
// (util/scatter_reduce.h), split over threads so that each out element's values are reduced
// on one thread in index order: results bit-identical to the portable kernel's. Float and
// integer dtypes; other layouts and shapes, and a bad index (for its message), run the portable
// kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/scatter_walk.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter_reduce.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::scatter_reduce.two_out";

Error scatter_reduce_two_out(KernelContext& ctx, Span<EValue*> args) {
  if (args[4]->tag != Tag::String) {
    return call_portable(kOp, ctx, args);
  }
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  const bool include_self = args[5]->b;
  Tensor& out = *args[6]->tensor;
  ScatterReduce reduce;
  int32_t dim = 0;
  opt::ScatterGeometry g;
  if (!parse_scatter_reduce(args[4]->string, &reduce) || self.dtype() == ScalarType::Bool) {
    return call_portable(kOp, ctx, args);
  }
  int32_t* counts = nullptr;
  if (mean_counts(ctx, kOp, reduce, include_self, self.numel(), &counts) != Error::Ok ||
      !opt::start_scatter(kOp, self, args[1]->i, index, &src, out, &dim, &g)) {
    return call_portable(kOp, ctx, args);
  }
  bool ok = true;
  // The portable kernel's three passes, each split over threads the same way.
  const bool known = dispatch_dtype_in<kFloatTypes | kIntTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ok = opt::with_index(index, [&](const auto* idx) {
      return reduce_scattered(
          reduce, include_self, src.data<const T>(), out.data<T>(), counts,
          [&](auto fn, int64_t cost) { return opt::scatter_walk(g, idx, cost, fn); });
    });
  });
  return known && ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::scatter_reduce.two_out", scatter_reduce_two_out, "TITT*BT");

}  // namespace pteron::optimized
