// executorch_prim::et_view.default(Tensor self, SymInt[] size, Tensor out): the view ExecuTorch's
// to_executorch emits in place of view_copy (ReplaceViewCopyWithViewPass), for example in
// bounded dynamic programs. `out` aliases self's data, resized to `size` (which may hold one -1
// and sizes computed by sym_size). ExecuTorch's memory planning gives out self's own offset, or
// leaves it unplanned (null data); out is pointed at self's data on every call either way, so
// reads through out always see self, even where self's data moved between calls.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error et_view(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "executorch_prim::et_view.default";
  PTERON_TRY(check_args(kOp, args, "TLT"));
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  // A view reinterprets the bytes in row-major order; any other layout would reorder them.
  PTERON_CHECK(self.is_contiguous() && out.is_contiguous(), Error::NotSupported,
               "%s: self and out must be contiguous", kOp);
  PTERON_CHECK(size.size() <= static_cast<size_t>(kMaxTensorDim), Error::NotSupported,
               "%s: rank %zu above %d", kOp, size.size(), kMaxTensorDim);
  int32_t sizes[kMaxTensorDim];
  int32_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      PTERON_CHECK(infer < 0, Error::InvalidArgument, "%s: only one dimension can be -1", kOp);
      infer = static_cast<int32_t>(i);
      continue;
    }
    PTERON_CHECK(size[i] >= 0 && size[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: invalid size %lld at dim %zu", kOp, static_cast<long long>(size[i]), i);
    sizes[i] = static_cast<int32_t>(size[i]);
    known *= size[i];
    PTERON_CHECK(known <= INT32_MAX, Error::InvalidArgument, "%s: shape too large", kOp);
  }
  if (infer >= 0) {
    PTERON_CHECK(known != 0 && self.numel() % known == 0, Error::InvalidArgument,
                 "%s: cannot infer the -1 dimension for input of size %lld", kOp,
                 static_cast<long long>(self.numel()));
    sizes[infer] = static_cast<int32_t>(self.numel() / known);
  } else {
    PTERON_CHECK(known == self.numel(), Error::InvalidArgument,
                 "%s: shape has %lld elements, input has %lld", kOp, static_cast<long long>(known),
                 static_cast<long long>(self.numel()));
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, static_cast<int32_t>(size.size())));
  out.set_data(self.mutable_data());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("executorch_prim::et_view.default", et_view);

}  // namespace pteron
