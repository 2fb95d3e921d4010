// aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Each out dim d of size r*s splits into a repeat loop (source stride 0) around a copy loop over
// self's dim, so the whole op is one strided copy of rank up to 2 * rank.
Error repeat_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::repeat.out";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> repeats = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const int32_t dim = static_cast<int32_t>(repeats.size());
  PTERON_CHECK(dim >= self.dim(), Error::InvalidArgument, "%s: %d repeats given for a %d-d tensor",
               kOp, dim, self.dim());
  PTERON_CHECK(dim <= kMaxTensorDim, Error::NotSupported, "%s: rank %d above %d", kOp, dim,
               kMaxTensorDim);
  const int32_t lead = dim - self.dim();
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < dim; ++d) {
    const int64_t s = d < lead ? 1 : self.size(d - lead);
    PTERON_CHECK(repeats[d] >= 0, Error::InvalidArgument, "%s: negative repeat %lld at dim %d", kOp,
                 static_cast<long long>(repeats[d]), d);
    PTERON_CHECK(s == 0 || repeats[d] <= INT32_MAX / s, Error::InvalidArgument,
                 "%s: result too large at dim %d", kOp, d);
    sizes[d] = static_cast<int32_t>(s * repeats[d]);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, dim));
  if (out.numel() == 0) return Error::Ok;
  int64_t loop_sizes[kMaxCopyDim], ds[kMaxCopyDim], ss[kMaxCopyDim];
  int32_t n = 0;
  for (int32_t d = 0; d < dim; ++d) {
    const int64_t s = d < lead ? 1 : self.size(d - lead);
    loop_sizes[n] = repeats[d];
    ds[n] = out.stride(d) * s;
    ss[n++] = 0;
    loop_sizes[n] = s;
    ds[n] = out.stride(d);
    ss[n++] = d < lead ? 0 : self.stride(d - lead);
  }
  strided_copy(out.mutable_data(), ds, self.const_data(), ss, loop_sizes, n, self.element_size());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::repeat.out", repeat_out, "TLT");

}  // namespace pteron
