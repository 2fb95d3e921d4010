// aten::index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out)
// -> Tensor(a!)
// Optimized for the KV-cache write transformers' static cache makes with index_copy_
// (cache.index_copy_(2, cache_position, states)): int64 1-d (or 0-d) index, self/source/out
// row-major. Each indexed row is one memcpy (util/row_scatter.h); with out planned in the
// state buffer's own memory self is not copied, so a decode step writes its rows, never the
// cache. Other layouts and dtypes, and every error, go to the portable kernel.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/row_scatter.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/scatter.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::index_copy.out";

Error index_copy_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& source = *args[3]->tensor;
  Tensor& out = *args[4]->tensor;
  const int64_t dim_arg = args[1]->i;
  const int32_t rank = self.dim();
  const int64_t dim = dim_arg < 0 ? dim_arg + rank : dim_arg;
  bool fast = rank >= 1 && dim >= 0 && dim < rank && index.dtype() == ScalarType::Long &&
              index.dim() <= 1 && source.dtype() == self.dtype() && source.dim() == rank &&
              is_row_major(self) && is_row_major(source) && is_row_major(out);
  for (int32_t d = 0; fast && d < rank; ++d)
    fast = source.size(d) == (d == dim ? index.numel() : self.size(d));
  fast = fast && indices_in_range(index, 0, self.size(static_cast<int32_t>(dim)));
  if (!fast) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(start_from_self(kOp, self, out));  // nothing moves when out is self
  if (out.numel() == 0 || index.numel() == 0) return Error::Ok;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int32_t d = static_cast<int32_t>(dim) + 1; d < rank; ++d) inner *= self.size(d);
  scatter_rows(
      {static_cast<char*>(out.mutable_data()), static_cast<const char*>(source.const_data()), outer,
       self.size(static_cast<int32_t>(dim)), index.numel(),
       static_cast<size_t>(inner) * self.element_size()},
      index);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index_copy.out", index_copy_out, "TITTT");

}  // namespace pteron::opt
