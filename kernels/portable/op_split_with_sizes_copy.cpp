// aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[]
// out) -> ()
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/narrow.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error split_with_sizes_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::split_with_sizes_copy.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> split_sizes = args[1]->int_list;
  const Span<Tensor* const> outs = args[3]->tensor_list;
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot split a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &dim));
  PTERON_CHECK(outs.size() == split_sizes.size(), Error::InvalidArgument,
               "%s: %zu outs for %zu split sizes", kOp, outs.size(), split_sizes.size());
  int64_t total = 0;
  for (const int64_t s : split_sizes) {
    PTERON_CHECK(s >= 0 && s <= self.size(dim), Error::InvalidArgument,
                 "%s: invalid split size %lld", kOp, static_cast<long long>(s));
    total += s;
  }
  PTERON_CHECK(total == self.size(dim), Error::InvalidArgument,
               "%s: split sizes add up to %lld, dim %d has size %d", kOp,
               static_cast<long long>(total), dim, self.size(dim));
  int64_t start = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    PTERON_CHECK(outs[i] != nullptr, Error::InvalidArgument, "%s: out[%zu] is None", kOp, i);
    PTERON_TRY(copy_narrow(kOp, self, dim, start, split_sizes[i], *outs[i], i));
    start += split_sizes[i];
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::split_with_sizes_copy.out", split_with_sizes_copy_out, "TLIA");

}  // namespace pteron
