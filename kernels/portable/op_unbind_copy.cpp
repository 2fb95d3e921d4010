// aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error unbind_copy_int_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::unbind_copy.int_out";
  const Tensor& self = *args[0]->tensor;
  const Span<Tensor* const> outs = args[2]->tensor_list;
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: cannot unbind a 0-d tensor", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  PTERON_CHECK(static_cast<int64_t>(outs.size()) == self.size(dim), Error::InvalidArgument,
               "%s: %zu outs for dim %d of size %d", kOp, outs.size(), dim, self.size(dim));
  int32_t sizes[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0, o = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    sizes[o] = self.size(d);
    strides[o++] = self.stride(d);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    PTERON_CHECK(outs[i] != nullptr, Error::InvalidArgument, "%s: out[%zu] is None", kOp, i);
    Tensor& out = *outs[i];
    PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
                 "%s: out[%zu] has dtype %s, expected %s", kOp, i, scalar_type_name(out.dtype()),
                 scalar_type_name(self.dtype()));
    PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim() - 1));
    copy_view(self, static_cast<int64_t>(i) * self.stride(dim), strides, out);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::unbind_copy.int_out", unbind_copy_int_out, "TIA");

}  // namespace pteron
