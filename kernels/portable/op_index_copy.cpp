// aten::index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) ->
// Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out.select(dim, index[i]) = source.select(dim, i) for each i (a cache written at
// the positions `index`). index is int64, 1-d or 0-d; source is self with index.numel() rows.
Error index_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::index_copy.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& source = *args[3]->tensor;
  Tensor& out = *args[4]->tensor;
  int32_t dim = 0;
  PTERON_TRY(check_index_rows(kOp, self, args[1]->i, index, source, false, &dim));
  const int64_t n = index.numel();
  PTERON_TRY(start_from_self(kOp, self, out));
  if (out.numel() == 0 || n == 0) return Error::Ok;

  // Each row: source's slice i along dim goes to out's slice index[i].
  int64_t sizes[kMaxTensorDim], ss[kMaxTensorDim], os[kMaxTensorDim];
  int32_t k = 0;
  for (int32_t d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    sizes[k] = self.size(d);
    ss[k] = source.stride(d);
    os[k++] = out.stride(d);
  }
  const int64_t source_step = self.dim() == 0 ? 0 : source.stride(dim);
  const int64_t out_step = self.dim() == 0 ? 0 : out.stride(dim);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = load_index(index, i);
    strided_copy(byte_ptr(out, at * out_step), os, byte_ptr(source, i * source_step), ss, sizes, k,
                 out.element_size());
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::index_copy.out", index_copy_out, "TITTT");

}  // namespace pteron
