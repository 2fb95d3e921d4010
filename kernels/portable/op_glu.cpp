// aten::glu.out(Tensor self, int dim=-1, *, Tensor(a!) out)
// out = a * sigmoid(b) where a and b are the first and second halves of self along dim (its
// size must be even). Floating dtypes; any dim orders.
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/walk.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error glu_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::glu.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(self.dim() > 0, Error::InvalidArgument, "%s: glu does not take a 0-d tensor", kOp);
  PTERON_CHECK(is_floating(self.dtype()) && out.dtype() == self.dtype(), Error::NotSupported,
               "%s: needs a floating self and an out of its dtype, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  const int64_t n = self.size(dim);
  PTERON_CHECK(n % 2 == 0, Error::InvalidArgument,
               "%s: halving dim %d must have an even size, got %lld", kOp, static_cast<int>(dim),
               static_cast<long long>(n));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d)
    sizes[d] = d == dim ? static_cast<int32_t>(n / 2) : self.size(d);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  if (out.numel() == 0) return Error::Ok;
  // Three operands over out's shape: out, the first half, the second half (self's strides,
  // offset by half the dim).
  int64_t so[kMaxTensorDim], sa[kMaxTensorDim];
  broadcast_strides(out, sizes, self.dim(), so);
  for (int32_t d = 0; d < self.dim(); ++d) sa[d] = self.size(d) == 1 ? 0 : self.stride(d);
  const int64_t* strides[3] = {so, sa, sa};
  const RowPlan<3> plan = plan_rows<3>(sizes, self.dim(), strides);
  const int64_t b_offset = (n / 2) * self.stride(dim);
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const T* x = self.data<const T>();
    T* y = out.data<T>();
    for_each_row(plan, [&](const int64_t* off, int64_t len, const int64_t* st) {
      for (int64_t k = 0; k < len; ++k) {
        const C a = load_value(x[off[1] + k * st[1]]);
        const C b = load_value(x[off[2] + b_offset + k * st[2]]);
        y[off[0] + k * st[0]] = store_value<T>(a / (C(1) + std::exp(-b)));
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::glu.out", glu_out, "TIT");

}  // namespace pteron
