// aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)
//
// The elements of self where mask (bool, broadcast with self) is true, in row-major order, as
// a 1-D tensor. Its length depends on the data: out is planned at its bound (the broadcast
// numel) as a bounded-dynamic tensor and resized here; a static out must have the exact length.
// Every dtype, any dim orders.
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/logical_walk.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::masked_select.out";

Error masked_select_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& mask = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(mask.dtype() == ScalarType::Bool, Error::InvalidArgument,
               "%s: mask must be bool, got %s", kOp, scalar_type_name(mask.dtype()));
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_CHECK(out.dim() == 1, Error::InvalidArgument, "%s: out must be 1-D, got %dD", kOp,
               out.dim());
  int32_t sizes[kMaxTensorDim], dim = 0;
  PTERON_TRY(broadcast_shape(kOp, self, mask, sizes, &dim));
  int64_t ss[kMaxTensorDim], ms[kMaxTensorDim];
  broadcast_strides(self, sizes, dim, ss);
  broadcast_strides(mask, sizes, dim, ms);
  int64_t total = 1;
  for (int32_t d = 0; d < dim; ++d) total *= sizes[d];
  int64_t count = 0;
  {
    LogicalWalk m(sizes, dim, ms);
    for (int64_t e = 0; e < total; ++e, m.next()) count += mask_at(mask, m.offset) ? 1 : 0;
  }
  PTERON_CHECK(count <= INT32_MAX, Error::InvalidArgument, "%s: result too large", kOp);
  const int32_t n = static_cast<int32_t>(count);
  PTERON_TRY(expect_out_shape(kOp, out, &n, 1));
  const size_t es = self.element_size();
  const char* src = static_cast<const char*>(self.const_data());
  char* dst = static_cast<char*>(out.mutable_data());
  const int64_t step = out.stride(0);
  LogicalWalk m(sizes, dim, ms), s(sizes, dim, ss);
  int64_t k = 0;
  for (int64_t e = 0; e < total; ++e, m.next(), s.next()) {
    if (!mask_at(mask, m.offset)) continue;
    std::memcpy(dst + k++ * step * static_cast<int64_t>(es),
                src + s.offset * static_cast<int64_t>(es), es);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::masked_select.out", masked_select_out, "TTT");

}  // namespace pteron
