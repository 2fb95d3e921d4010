// executorch_prim::et_view.default(Tensor self, SymInt[] size, Tensor out): the view ExecuTorch's
// to_executorch emits in place of view_copy (ReplaceViewCopyWithViewPass), for example in
// bounded dynamic programs. `out` aliases self's data, resized to `size` (which may hold one -1
// and sizes computed by sym_size). ExecuTorch's memory planning gives out self's own offset, or
// leaves it unplanned (null data); out is pointed at self's data on every call either way, so
// reads through out always see self, even where self's data moved between calls.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/view_shape.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error et_view(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "executorch_prim::et_view.default";
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  // A view reinterprets the bytes in row-major order; any other layout would reorder them.
  PTERON_CHECK(self.is_contiguous() && out.is_contiguous(), Error::NotSupported,
               "%s: self and out must be contiguous", kOp);
  int32_t sizes[kMaxTensorDim];
  PTERON_TRY(resolve_view_sizes(kOp, self, size, sizes));
  PTERON_TRY(expect_out_shape(kOp, out, sizes, static_cast<int32_t>(size.size())));
  out.set_data(self.mutable_data());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("executorch_prim::et_view.default", et_view, "TLT");

}  // namespace pteron
