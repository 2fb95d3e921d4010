// aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error stack_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::stack.out";
  const Span<Tensor* const> tensors = args[0]->tensor_list;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(!tensors.empty(), Error::InvalidArgument, "%s: expects a non-empty list", kOp);
  for (size_t i = 0; i < tensors.size(); ++i) {
    PTERON_CHECK(tensors[i] != nullptr, Error::InvalidArgument, "%s: tensor %zu is None", kOp, i);
  }
  const Tensor& ref = *tensors[0];
  PTERON_CHECK(ref.dim() < kMaxTensorDim, Error::NotSupported, "%s: rank above %d", kOp,
               kMaxTensorDim);
  int32_t dim = 0;  // the new dim may sit anywhere in [0, rank]
  PTERON_TRY(normalize_dim(kOp, args[1]->i, ref.dim() + 1, &dim));
  for (size_t i = 1; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    bool same = t.dim() == ref.dim();
    for (int32_t d = 0; same && d < t.dim(); ++d) same = t.size(d) == ref.size(d);
    PTERON_CHECK(same, Error::InvalidArgument, "%s: tensor %zu differs in shape from tensor 0", kOp,
                 i);
  }
  PTERON_CHECK(tensors.size() <= INT32_MAX, Error::InvalidArgument, "%s: too many tensors", kOp);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0, s = 0; d <= ref.dim(); ++d) {
    sizes[d] = d == dim ? static_cast<int32_t>(tensors.size()) : ref.size(s++);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, ref.dim() + 1));
  int64_t strides[kMaxTensorDim];  // out's strides without the stacked dim
  for (int32_t d = 0, o = 0; d <= ref.dim(); ++d) {
    if (d != dim) strides[o++] = out.stride(d);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    PTERON_CHECK(copy_into_view(t, out, static_cast<int64_t>(i) * out.stride(dim), strides),
                 Error::NotSupported, "%s: cannot convert %s to %s", kOp,
                 scalar_type_name(t.dtype()), scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::stack.out", stack_out, "AIT");

}  // namespace pteron
