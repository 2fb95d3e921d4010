// aten::index_reduce.out(Tensor self, int dim, Tensor index, Tensor source, str reduce, *,
//     bool include_self=True, Tensor(a!) out) -> Tensor(a!)
//
// out = self; each slice i of source along dim is reduced into out's slice index[i] (prod, mean,
// amax, amin), with or without self's value, on scatter_reduce's arithmetic (a NaN from source
// wins; mean floors for integers). With include_self=False the slices index names start from
// the reduction's identity; the others keep self. Real dtypes (torch has no bool form); int32 or
// int64 indices.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/logical_walk.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/scatter_reduce.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::index_reduce.out";

// Calls fn(out offset, source offset) for every element of source, row i going to out's row
// index[i].
template <typename Fn>
void for_each_index_row(const Tensor& index, const Tensor& source, const Tensor& out, int32_t dim,
                        Fn&& fn) {
  const int32_t rank = source.dim();
  LogicalWalk walk(source);
  const int64_t index_stride = index.dim() == 0 ? 0 : index.stride(0);
  for (int64_t e = 0; e < source.numel(); ++e, walk.next()) {
    int64_t o = 0;
    for (int32_t d = 0; d < rank; ++d) {
      const int64_t at = d == dim ? load_index(index, walk.index[d] * index_stride) : walk.index[d];
      o += at * out.stride(d);
    }
    fn(o, walk.offset);
  }
}

Error index_reduce_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& source = *args[3]->tensor;
  ScatterReduce reduce;
  PTERON_TRY(read_scatter_reduce_arg(kOp, *args[4], /*with_sum=*/false, &reduce));
  const bool include_self = args[5]->b;
  Tensor& out = *args[6]->tensor;
  PTERON_CHECK(dtype_in(self.dtype(), kRealTypes), Error::NotSupported,
               "%s: dtype %s not supported (torch has no index_reduce of it)", kOp,
               scalar_type_name(self.dtype()));
  int32_t dim = 0;
  PTERON_TRY(check_index_rows(kOp, self, args[1]->i, index, source, true, &dim));
  PTERON_TRY(start_from_self(kOp, self, out));
  if (index.numel() == 0 || out.numel() == 0) return Error::Ok;
  int32_t* counts = nullptr;
  PTERON_TRY(mean_counts(ctx, kOp, reduce, include_self, out.numel(), &counts));
  dispatch_dtype_in<kRealTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_scattered(reduce, include_self, source.data<const T>(), out.data<T>(), counts,
                     [&](auto fn, int64_t) {
                       for_each_index_row(index, source, out, dim, fn);
                       return true;
                     });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index_reduce.out", index_reduce_out, "TITT*BT");

}  // namespace pteron
