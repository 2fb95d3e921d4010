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

// The portable kernel's three passes (identity where self is left out, the reduction, mean's
// division), each split the same way; `counts` (mean only) holds out.numel() counters.
template <typename T, typename Idx>
bool reduce_into(const opt::ScatterGeometry& g, const Idx* idx, ScatterReduce reduce,
                 bool include_self, const T* from, T* dst, int32_t* counts) {
  using C = typename ComputeType<T>::type;
  if (!include_self) {
    const T start = store_value<T>(scatter_reduce_identity<C>(reduce));
    if (!opt::scatter_walk(g, idx, 2, [dst, start](int64_t o, int64_t) { dst[o] = start; }))
      return false;
  }
  bool ok = true;
  with_scatter_reduce(reduce, [&](auto r) {
    constexpr ScatterReduce kR = decltype(r)::value;
    ok = opt::scatter_walk(g, idx, 4, [dst, from, counts](int64_t o, int64_t s) {
      dst[o] = store_value<T>(scatter_combine<kR, C>(load_value(dst[o]), load_value(from[s])));
      if constexpr (kR == ScatterReduce::Mean) ++counts[o];
    });
  });
  if (!ok || counts == nullptr) return ok;
  return opt::scatter_walk(g, idx, 4, [dst, counts](int64_t o, int64_t) {
    if (counts[o] <= 1) return;  // each position divides once
    dst[o] = store_value<T>(scatter_mean<C>(load_value(dst[o]), counts[o]));
    counts[o] = 1;
  });
}

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
  if (reduce == ScatterReduce::Mean) {
    const size_t bytes = static_cast<size_t>(self.numel()) * sizeof(int32_t);
    counts = static_cast<int32_t*>(ctx.allocate_scratch(bytes, 64));
    if (counts == nullptr) return call_portable(kOp, ctx, args);
  }
  if (!opt::start_scatter(kOp, self, args[1]->i, index, &src, out, &dim, &g)) {
    return call_portable(kOp, ctx, args);
  }
  if (counts != nullptr) {
    const int32_t start = include_self ? 1 : 0;
    for (int64_t k = 0; k < out.numel(); ++k) counts[k] = start;
  }
  bool ok = true;
  const bool known = dispatch_dtype_in<kFloatTypes | kIntTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ok = opt::with_index(index, [&](const auto* idx) {
      return reduce_into<T>(g, idx, reduce, include_self, src.data<const T>(), out.data<T>(),
                            counts);
    });
  });
  return known && ok ? Error::Ok : call_portable(kOp, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::scatter_reduce.two_out", scatter_reduce_two_out, "TITT*BT");

}  // namespace pteron::optimized
