// aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/narrow.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Chunks of split_size along dim, the last one shorter; an empty dim gives one empty chunk.
Error split_copy_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::split_copy.Tensor_out";
  const Tensor& self = *args[0]->tensor;
  const int64_t split = args[1]->i;
  const Span<Tensor* const> outs = args[3]->tensor_list;
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot split a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &dim));
  const int64_t size = self.size(dim);
  PTERON_CHECK(split > 0 || (split == 0 && size == 0), Error::InvalidArgument,
               "%s: split_size %lld invalid for dim %d of size %lld", kOp,
               static_cast<long long>(split), dim, static_cast<long long>(size));
  const int64_t chunks = size == 0 ? 1 : (size + split - 1) / split;
  PTERON_CHECK(static_cast<int64_t>(outs.size()) == chunks, Error::InvalidArgument,
               "%s: %zu outs, the split makes %lld", kOp, outs.size(),
               static_cast<long long>(chunks));
  for (int64_t i = 0; i < chunks; ++i) {
    PTERON_CHECK(outs[i] != nullptr, Error::InvalidArgument, "%s: out[%lld] is None", kOp,
                 static_cast<long long>(i));
    const int64_t start = i * split;
    const int64_t len = size - start < split ? size - start : split;
    PTERON_TRY(copy_narrow(kOp, self, dim, start, len, *outs[i], static_cast<size_t>(i)));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::split_copy.Tensor_out", split_copy_tensor_out, "TIIA");

}  // namespace pteron
