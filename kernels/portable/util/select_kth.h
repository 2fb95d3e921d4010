// k-th smallest element along a dim, shared by kthvalue and median: each line is copied with
// its positions into scratch memory and a selection picks the element (no heap). NaN counts as
// larger than every number (torch's sort order); median instead returns NaN for a line holding
// one, at the first NaN's position, as torch.median does. kthvalue runs ATen's own quickselect
// step by step, so that among equal values it reports torch's position.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

struct SelectOptions {
  int64_t k = 1;                  // 1-based rank; 0 = the lower median ((n - 1) / 2 + 1)
  bool nan_is_result = false;     // median: a NaN in the line is the answer
  bool aten_quickselect = false;  // kthvalue: ATen's quickselect picks among equal values
};

// ATen's kthvalue selection (its quick_select_template: Numerical Recipes' quickselect with a
// median-of-three pivot), comparing values only, so ties land where torch's do. `gt` is
// "a after b" (NaN after numbers); item k (0-based) ends up in place.
template <typename Item, typename Gt>
void aten_quick_select(Item* arr, int64_t n, int64_t k, Gt gt) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt(arr[lo], arr[hi])) std::swap(arr[lo], arr[hi]);
      return;
    }
    std::swap(arr[lo + (hi - lo) / 2], arr[lo + 1]);
    if (gt(arr[lo + 1], arr[hi])) std::swap(arr[lo + 1], arr[hi]);
    if (gt(arr[lo], arr[hi])) std::swap(arr[lo], arr[hi]);
    if (gt(arr[lo + 1], arr[lo])) std::swap(arr[lo + 1], arr[lo]);
    int64_t i = lo + 1, j = hi;
    const Item pivot = arr[lo];
    while (true) {  // arr[hi] is not below the pivot and arr[lo] is it: both scans stop
      do ++i;
      while (gt(pivot, arr[i]));
      do --j;
      while (gt(arr[j], pivot));
      if (j < i) break;
      std::swap(arr[i], arr[j]);
    }
    std::swap(arr[lo], arr[j]);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// values/indices have self's shape with dim removed (or kept as size 1 with keepdim); `dim` is
// already normalised (for a 0-d self: 0, one line of one element). indices may be null.
inline Error select_kth(const char* op, KernelContext& ctx, const Tensor& self, int32_t dim,
                        bool keepdim, SelectOptions opt, Tensor& values, Tensor* indices) {
  PTERON_CHECK(values.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: values out has dtype %s, expected %s", op, scalar_type_name(values.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(indices == nullptr || indices->dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices out must be int64", op);
  PTERON_CHECK(self.dtype() != ScalarType::Bool && is_supported(self.dtype()), Error::NotSupported,
               "%s: dtype %s not supported", op, scalar_type_name(self.dtype()));
  const int32_t rank = self.dim();
  const int64_t n = rank == 0 ? 1 : self.size(dim);
  int32_t sizes[kMaxTensorDim];
  int32_t out_rank = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (d != dim)
      sizes[out_rank++] = self.size(d);
    else if (keepdim)
      sizes[out_rank++] = 1;
  }
  PTERON_TRY(expect_out_shape(op, values, sizes, out_rank));
  if (indices) PTERON_TRY(expect_out_shape(op, *indices, sizes, out_rank));
  if (values.numel() == 0) return Error::Ok;
  PTERON_CHECK(n > 0, Error::InvalidArgument, "%s: cannot select from an empty dimension", op);
  const int64_t k = opt.k == 0 ? (n - 1) / 2 + 1 : opt.k;
  PTERON_CHECK(k >= 1 && k <= n, Error::InvalidArgument,
               "%s: k %lld out of range for %lld elements", op, static_cast<long long>(k),
               static_cast<long long>(n));
  bool ok = true;
  dispatch_dtype(self.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    struct Item {
      C v;
      int64_t at;
    };
    Item* line = static_cast<Item*>(ctx.allocate_scratch(sizeof(Item) * n, alignof(Item)));
    if (line == nullptr) {
      ok = false;
      return;
    }
    const T* x = self.data<const T>();
    T* vo = values.data<T>();
    int64_t* io = indices ? indices->data<int64_t>() : nullptr;
    const int64_t step = rank == 0 ? 0 : self.stride(dim);
    // NaN last, then by value; ties by position so the result does not depend on the sort.
    const auto less = [](const Item& a, const Item& b) {
      const bool an = a.v != a.v, bn = b.v != b.v;
      if (an != bn) return bn;
      if (!an && a.v != b.v) return a.v < b.v;
      return a.at < b.at;
    };
    int64_t idx[kMaxTensorDim] = {0};
    while (true) {
      int64_t in = 0, ov = 0, oi = 0;
      int32_t od = 0;
      for (int32_t d = 0; d < rank; ++d) {
        in += idx[d] * self.stride(d);
        if (d == dim && !keepdim) continue;
        ov += idx[d] * values.stride(od);
        if (indices) oi += idx[d] * indices->stride(od);
        ++od;
      }
      int64_t first_nan = -1;
      for (int64_t j = 0; j < n; ++j) {
        line[j] = Item{load_value(x[in + j * step]), j};
        if (first_nan < 0 && line[j].v != line[j].v) first_nan = j;
      }
      Item pick;
      if (opt.nan_is_result && first_nan >= 0) {
        pick = line[first_nan];
      } else if (opt.aten_quickselect) {
        aten_quick_select(line, n, k - 1, [](const Item& a, const Item& b) {
          const bool an = a.v != a.v, bn = b.v != b.v;
          return (an && !bn) || a.v > b.v;
        });
        pick = line[k - 1];
      } else {
        std::nth_element(line, line + (k - 1), line + n, less);
        pick = line[k - 1];
      }
      vo[ov] = store_value<T>(pick.v);
      if (io) io[oi] = pick.at;
      int32_t d = rank - 1;
      for (; d >= 0; --d) {
        if (d == dim) continue;
        if (++idx[d] < self.size(d)) break;
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  });
  if (!ok) {
    return fail(Error::OutOfMemory, "%s: no scratch memory for a line of %lld elements", op,
                static_cast<long long>(n));
  }
  return Error::Ok;
}

}  // namespace pteron
