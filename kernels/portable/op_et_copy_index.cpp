// executorch_prim::et_copy_index.tensor(copy_to, copy_from, index): copies copy_from into row
// `index` (dim 0) of copy_to, first growing copy_to's dim 0 to index + 1 when it is shorter
// (within the bound it was planned at). ExecuTorch's prim op of that name, with which its map and
// scan loops stack each iteration's result, and pteron's scan / map loops too. No out value: the
// arguments are copy_to, copy_from, index.
//
// Index 0 starts a loop, so it also shrinks a resizable copy_to to one row: a loop over a dynamic
// number of rows leaves as many as this call wrote, not as many as the longest call before it
// (ExecuTorch's kernel only grows, which leaves stale rows after a shorter call). A static
// copy_to keeps its size: its rows may be written in any order.
#include <cstring>

#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error et_copy_index(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "executorch_prim::et_copy_index.tensor";
  Tensor& to = *args[0]->tensor;
  const Tensor& from = *args[1]->tensor;
  const int64_t index = args[2]->i;
  PTERON_CHECK(to.dim() == from.dim() + 1, Error::InvalidArgument,
               "%s: copy_to has %d dims, copy_from %d (one fewer expected)", kOp, to.dim(),
               from.dim());
  PTERON_CHECK(to.dtype() == from.dtype(), Error::InvalidArgument,
               "%s: copy_to is %s, copy_from %s", kOp, scalar_type_name(to.dtype()),
               scalar_type_name(from.dtype()));
  PTERON_CHECK(to.is_contiguous() && from.is_contiguous(), Error::NotSupported,
               "%s: takes contiguous tensors", kOp);
  PTERON_CHECK(index >= 0 && index < INT32_MAX, Error::InvalidArgument, "%s: index %lld", kOp,
               static_cast<long long>(index));
  for (int32_t d = 0; d < from.dim(); ++d) {
    PTERON_CHECK(to.size(d + 1) == from.size(d), Error::InvalidArgument,
                 "%s: a row of copy_to has size %d at dim %d, copy_from %d", kOp, to.size(d + 1), d,
                 from.size(d));
  }
  const bool restart = index == 0 && to.dynamism() != ShapeDynamism::Static;
  if (restart || to.size(0) <= index) {
    int32_t sizes[kMaxTensorDim];
    for (int32_t d = 0; d < to.dim(); ++d) sizes[d] = to.size(d);
    sizes[0] = static_cast<int32_t>(index + 1);
    PTERON_TRY(to.resize({sizes, static_cast<size_t>(to.dim())}));
  }
  const size_t row = from.nbytes();
  if (row == 0) return Error::Ok;
  std::memcpy(static_cast<uint8_t*>(to.mutable_data()) + static_cast<size_t>(index) * row,
              from.const_data(), row);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("executorch_prim::et_copy_index.tensor", et_copy_index, "TTI");

}  // namespace pteron
