// aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values,
//     Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
// aten::sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False,
//     Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
//
// Order as torch's CPU kernel: NaN above everything (last ascending, first descending).
// stable=True keeps equal elements in index order (a merge sort in scratch memory); otherwise
// std::sort on (value, index) pairs that start in index order, the algorithm and comparator
// ATen uses, so ties come out as torch's do (and, as ATen, a stable radix order for long 1-D
// int32/int64 rows in ascending order). Every real dtype and bool, any dim order.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/lines.h"
#include "kernels/portable/util/sort_order.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename T>
void sort_lines(const Tensor& self, Tensor& values, Tensor& indices, int32_t dim, bool descending,
                bool stable, void* scratch) {
  using V = typename ComputeType<T>::type;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t xs = self.dim() == 0 ? 0 : self.stride(dim);
  const int64_t vs = self.dim() == 0 ? 0 : values.stride(dim);
  const int64_t is = self.dim() == 0 ? 0 : indices.stride(dim);
  Pair<V>* pairs = static_cast<Pair<V>*>(scratch);
  const T* x = self.data<const T>();
  T* y = values.data<T>();
  int64_t* yi = indices.data<int64_t>();
  const Before<V> before{descending};
  const Tensor* const ts[3] = {&self, &values, &indices};
  for_each_line<3>(self.sizes().data(), self.dim(), dim, ts, [&](const int64_t* off) {
    for (int64_t j = 0; j < n; ++j) pairs[j] = {load_value(x[off[0] + j * xs]), j};
    if (stable) {
      merge_sort(pairs, pairs + n, n, before);
    } else {
      std::sort(pairs, pairs + n, before);
    }
    for (int64_t j = 0; j < n; ++j) {
      y[off[1] + j * vs] = x[off[0] + pairs[j].i * xs];
      yi[off[2] + j * is] = pairs[j].i;
    }
  });
}

Error sort_impl(const char* op, KernelContext& ctx, const Tensor& self, int64_t dim_arg,
                bool descending, bool stable, Tensor& values, Tensor& indices) {
  PTERON_TRY(expect_dtype(op, values, self.dtype(), "values"));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices must be int64, got %s", op, scalar_type_name(indices.dtype()));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(op, dim_arg, self.dim(), &dim));
  PTERON_TRY(expect_out_shape(op, values, self.sizes().data(), self.dim()));
  PTERON_TRY(expect_out_shape(op, indices, self.sizes().data(), self.dim()));
  if (!dtype_in(self.dtype(), kAllTypes)) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op,
                scalar_type_name(self.dtype()));
  }
  if (self.numel() == 0) return Error::Ok;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  // ATen sorts 1-D int32/int64 ascending with a (stable) radix sort from 32768 elements
  // (can_use_radix_sort), so there ties keep index order even when stable is false.
  if (self.dim() == 1 && !descending && n >= 32768 &&
      (self.dtype() == ScalarType::Int || self.dtype() == ScalarType::Long)) {
    stable = true;
  }
  // Pairs of (compute value <= 8 bytes, int64), twice for the merge sort.
  const size_t bytes = static_cast<size_t>(n) * 16 * (stable ? 2 : 1);
  void* scratch = ctx.allocate_scratch(bytes, 16);
  PTERON_CHECK(scratch != nullptr, Error::OutOfMemory, "%s: needs %zu bytes of scratch", op, bytes);
  dispatch_dtype_in<kAllTypes>(self.dtype(), [&](auto tag) {
    sort_lines<typename decltype(tag)::type>(self, values, indices, dim, descending, stable,
                                             scratch);
  });
  return Error::Ok;
}

Error sort_values(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sort.values";
  return sort_impl(kOp, ctx, *args[0]->tensor, args[1]->i, args[2]->b, false, *args[3]->tensor,
                   *args[4]->tensor);
}

Error sort_values_stable(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sort.values_stable";
  PTERON_CHECK(args[1]->is_none() || args[1]->tag == Tag::Bool, Error::InvalidProgram,
               "%s argument 1: expected a bool or None, got %s", kOp, tag_name(args[1]->tag));
  const bool stable = args[1]->tag == Tag::Bool && args[1]->b;
  return sort_impl(kOp, ctx, *args[0]->tensor, args[2]->i, args[3]->b, stable, *args[4]->tensor,
                   *args[5]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::sort.values", sort_values, "TIBTT");
PTERON_KERNEL("aten::sort.values_stable", sort_values_stable, "T*IBTT");

}  // namespace pteron
