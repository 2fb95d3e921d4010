// aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, *,
// Tensor(a!) out) -> Tensor(a!)
// Optimized for the KV-cache write transformers' static cache exports
// (cache[:, :, cache_position] = states): one int64/int32 1-d index tensor at some dim, every
// index before it None, values exactly the indexed shape, self/values/out row-major, no
// accumulate. Then each indexed row is one memcpy (util/row_scatter.h), and when the memory
// planner gives out the state buffer's own memory (compiler/memory/graph_memory.h) self is not
// copied at all: a decode step writes its rows, never the cache. Anything else (broadcast
// values, several index tensors, bool masks, accumulate, other layouts, bad indices) goes to
// the portable kernel, which also reports every error.
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/row_scatter.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/scatter.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::index_put.out";

// The dim of the one index tensor, or -1 when `indices` is not that form.
int32_t single_index_dim(const Tensor& self, Span<Tensor* const> indices) {
  int32_t dim = -1;
  if (indices.size() > static_cast<size_t>(self.dim())) return -1;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d] == nullptr) continue;
    if (dim >= 0) return -1;
    dim = static_cast<int32_t>(d);
  }
  return dim;
}

Error index_put_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<Tensor* const> indices = args[1]->tensor_list;
  const Tensor& values = *args[2]->tensor;
  Tensor& out = *args[4]->tensor;
  const int32_t dim = single_index_dim(self, indices);
  if (args[3]->b || dim < 0) return optimized::call_portable(kOp, ctx, args);
  const Tensor& index = *indices[static_cast<size_t>(dim)];
  bool fast = (index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int) &&
              index.dim() == 1 && values.dtype() == self.dtype() && values.dim() == self.dim() &&
              is_row_major(self) && is_row_major(values) && is_row_major(out) &&
              is_row_major(index);
  for (int32_t d = 0; fast && d < self.dim(); ++d)
    fast = values.size(d) == (d == dim ? index.size(0) : self.size(d));
  fast = fast && indices_in_range(index, -int64_t{self.size(dim)}, self.size(dim));
  if (!fast) return optimized::call_portable(kOp, ctx, args);
  PTERON_TRY(start_from_self(kOp, self, out));  // nothing moves when out is self
  if (out.numel() == 0 || index.numel() == 0) return Error::Ok;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int32_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  scatter_rows(
      {static_cast<char*>(out.mutable_data()), static_cast<const char*>(values.const_data()), outer,
       self.size(dim), index.size(0), static_cast<size_t>(inner) * self.element_size()},
      index);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index_put.out", index_put_out, "TOTBT");

}  // namespace pteron::opt
