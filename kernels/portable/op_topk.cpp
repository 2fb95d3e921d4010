// aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *,
//     Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
//
// The k largest (or smallest) elements of each line along dim, NaN counted above every number.
// Selection follows ATen's CPU kernel step for step, so ties and the unsorted order match torch:
// (value, index) pairs in index order, std::partial_sort when k * 64 <= n, else std::nth_element
// and (sorted) std::sort of the first k - 1. Every real dtype, any dim order.
#include <algorithm>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/lines.h"
#include "kernels/portable/util/sort_order.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::topk.values";

template <typename T>
void topk_lines(const Tensor& self, Tensor& values, Tensor& indices, int32_t dim, int64_t k,
                bool largest, bool sorted, void* scratch) {
  using V = typename ComputeType<T>::type;
  const bool scalar = self.dim() == 0;
  const int64_t n = scalar ? 1 : self.size(dim);
  const int64_t xs = scalar ? 0 : self.stride(dim);
  const int64_t vs = scalar ? 0 : values.stride(dim);
  const int64_t is = scalar ? 0 : indices.stride(dim);
  Pair<V>* q = static_cast<Pair<V>*>(scratch);
  const T* x = self.data<const T>();
  T* y = values.data<T>();
  int64_t* yi = indices.data<int64_t>();
  const Before<V> before{largest};  // largest first = descending order
  const Tensor* const ts[3] = {&self, &values, &indices};
  for_each_line<3>(self.sizes().data(), self.dim(), dim, ts, [&](const int64_t* off) {
    for (int64_t j = 0; j < n; ++j) q[j] = {load_value(x[off[0] + j * xs]), j};
    if (k * 64 <= n) {
      std::partial_sort(q, q + k, q + n, before);
    } else {
      std::nth_element(q, q + k - 1, q + n, before);
      if (sorted) std::sort(q, q + k - 1, before);
    }
    for (int64_t j = 0; j < k; ++j) {
      y[off[1] + j * vs] = x[off[0] + q[j].i * xs];
      yi[off[2] + j * is] = q[j].i;
    }
  });
}

Error topk_values(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const int64_t k = args[1]->i;
  Tensor& values = *args[5]->tensor;
  Tensor& indices = *args[6]->tensor;
  PTERON_TRY(expect_dtype(kOp, values, self.dtype(), "values"));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices must be int64, got %s", kOp, scalar_type_name(indices.dtype()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[2]->i, self.dim(), &dim));
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  PTERON_CHECK(k >= 0 && k <= n, Error::InvalidArgument,
               "%s: k %lld out of range for dim %d of size %lld", kOp, static_cast<long long>(k),
               dim, static_cast<long long>(n));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  if (self.dim() > 0) sizes[dim] = static_cast<int32_t>(k);
  PTERON_TRY(expect_out_shape(kOp, values, sizes, self.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, sizes, self.dim()));
  if (!dtype_in(self.dtype(), kRealTypes)) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(self.dtype()));
  }
  if (values.numel() == 0) return Error::Ok;
  const size_t bytes = static_cast<size_t>(n) * 16;
  void* scratch = ctx.allocate_scratch(bytes, 16);
  PTERON_CHECK(scratch != nullptr, Error::OutOfMemory, "%s: needs %zu bytes of scratch", kOp,
               bytes);
  dispatch_dtype_in<kRealTypes>(self.dtype(), [&](auto tag) {
    topk_lines<typename decltype(tag)::type>(self, values, indices, dim, k, args[3]->b, args[4]->b,
                                             scratch);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::topk.values", topk_values, "TIIBBTT");

}  // namespace pteron
