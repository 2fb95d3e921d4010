// aten::masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out)
//     -> Tensor(a!)
//
// out = self broadcast with mask (bool); where mask is true, out takes source's elements one
// after another (source read in row-major order; it needs at least as many elements as mask has
// true values, else a one-line error). Every dtype, any dim orders.
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/logical_walk.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::masked_scatter.out";

Error masked_scatter_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& mask = *args[1]->tensor;
  const Tensor& source = *args[2]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(mask.dtype() == ScalarType::Bool, Error::InvalidArgument,
               "%s: mask must be bool, got %s", kOp, scalar_type_name(mask.dtype()));
  PTERON_TRY(expect_dtype(kOp, source, self.dtype(), "source"));
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  int32_t sizes[kMaxTensorDim], dim = 0;
  PTERON_TRY(broadcast_shape(kOp, self, mask, sizes, &dim));
  PTERON_TRY(expect_out_shape(kOp, out, sizes, dim));
  int64_t ss[kMaxTensorDim], ms[kMaxTensorDim];
  broadcast_strides(self, sizes, dim, ss);
  broadcast_strides(mask, sizes, dim, ms);
  const int64_t total = out.numel();
  int64_t count = 0;
  {
    LogicalWalk m(sizes, dim, ms);
    for (int64_t e = 0; e < total; ++e, m.next()) count += mask_at(mask, m.offset) ? 1 : 0;
  }
  PTERON_CHECK(count <= source.numel(), Error::InvalidArgument,
               "%s: mask has %lld true values but source only %lld elements", kOp,
               static_cast<long long>(count), static_cast<long long>(source.numel()));
  const int64_t es = static_cast<int64_t>(self.element_size());
  const char* x = static_cast<const char*>(self.const_data());
  const char* src = static_cast<const char*>(source.const_data());
  char* y = static_cast<char*>(out.mutable_data());
  LogicalWalk m(sizes, dim, ms), s(sizes, dim, ss), o(out);
  LogicalWalk from(source);
  for (int64_t e = 0; e < total; ++e, m.next(), s.next(), o.next()) {
    if (mask_at(mask, m.offset)) {
      std::memcpy(y + o.offset * es, src + from.offset * es, static_cast<size_t>(es));
      from.next();
    } else {
      std::memcpy(y + o.offset * es, x + s.offset * es, static_cast<size_t>(es));
    }
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::masked_scatter.out", masked_scatter_out, "TTTT");

}  // namespace pteron
