// Binary search of sorted rows, shared by searchsorted and bucketize: for each value, the first
// index whose element is >= it (left) or > it (right), with torch's comparisons, so a NaN value
// lands past the end. An optional sorter gives each row's ascending order.
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/index_util.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

template <typename T, typename V>
int64_t search_row(const T* row, int64_t step, int64_t n, const Tensor* sorter, int64_t sorter_row,
                   int64_t sorter_step, V value, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const int64_t at = sorter ? load_index(*sorter, sorter_row + mid * sorter_step) : mid;
    const auto m = load_value(row[at * step]);
    const bool go_right = right ? !(m > value) : !(m >= value);
    if (go_right)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// seq: 1-D, or N-D with the same leading dims as `values` (each row of values searches the
// matching row of seq). values given as a tensor (`scalar` null) or one scalar. out: int64, or
// int32 when out_int32; values' shape.
inline Error search_sorted(const char* op, const Tensor& seq, const Tensor* values,
                           const double* scalar, bool out_int32, bool right, const Tensor* sorter,
                           Tensor& out) {
  PTERON_CHECK(seq.dim() >= 1, Error::InvalidArgument,
               "%s: the sorted sequence must have at least 1 dim", op);
  PTERON_CHECK(out.dtype() == (out_int32 ? ScalarType::Int : ScalarType::Long),
               Error::InvalidArgument, "%s: out must be %s, got %s", op,
               out_int32 ? "int32" : "int64", scalar_type_name(out.dtype()));
  PTERON_CHECK(!(out_int32 && seq.size(seq.dim() - 1) > INT32_MAX), Error::InvalidArgument,
               "%s: too many elements for int32 indices", op);
  PTERON_CHECK(is_supported(seq.dtype()) && seq.dtype() != ScalarType::Bool, Error::NotSupported,
               "%s: dtype %s not supported", op, scalar_type_name(seq.dtype()));
  const int32_t vdim = values ? values->dim() : 0;
  if (values) {
    PTERON_CHECK(is_supported(values->dtype()) && values->dtype() != ScalarType::Bool,
                 Error::NotSupported, "%s: dtype %s not supported", op,
                 scalar_type_name(values->dtype()));
    PTERON_TRY(expect_out_shape(op, out, values->sizes().data(), vdim));
  } else {
    PTERON_TRY(expect_out_shape(op, out, nullptr, 0));
  }
  if (seq.dim() > 1) {
    PTERON_CHECK(values != nullptr && vdim == seq.dim(), Error::InvalidArgument,
                 "%s: an N-D sorted sequence needs values with the same leading dims", op);
    for (int32_t d = 0; d + 1 < seq.dim(); ++d) {
      PTERON_CHECK(values->size(d) == seq.size(d), Error::InvalidArgument,
                   "%s: leading dim %d differs (%d vs %d)", op, static_cast<int>(d),
                   static_cast<int>(seq.size(d)), static_cast<int>(values->size(d)));
    }
  }
  if (sorter) {
    PTERON_TRY(expect_index_dtype(op, *sorter, "sorter", /*allow_int32=*/true));
    PTERON_CHECK(sorter->dim() == seq.dim(), Error::InvalidArgument,
                 "%s: sorter must have the sorted sequence's shape", op);
    for (int32_t d = 0; d < seq.dim(); ++d) {
      PTERON_CHECK(sorter->size(d) == seq.size(d), Error::InvalidArgument,
                   "%s: sorter must have the sorted sequence's shape", op);
    }
    PTERON_TRY(check_indices(op, *sorter, seq.size(seq.dim() - 1), seq.dim() - 1, false));
  }
  const int64_t n = seq.size(seq.dim() - 1);
  const int64_t step = seq.stride(seq.dim() - 1);
  const int64_t count = values ? values->numel() : 1;
  if (count == 0) return Error::Ok;
  // Walk values in row-major order; for N-D seq, the row is values' leading index.
  const int32_t rank = vdim;
  dispatch_dtype(seq.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = seq.data<const T>();
    int64_t idx[kMaxTensorDim] = {0};
    for (int64_t k = 0; k < count; ++k) {
      int64_t voff = 0, ooff = 0, row = 0, srow = 0;
      for (int32_t d = 0; d < rank; ++d) {
        voff += idx[d] * values->stride(d);
        ooff += idx[d] * out.stride(d);
        if (seq.dim() > 1 && d + 1 < rank) {
          row += idx[d] * seq.stride(d);
          if (sorter) srow += idx[d] * sorter->stride(d);
        }
      }
      int64_t pos;
      if (values == nullptr) {
        pos = search_row(s, step, n, sorter, srow, sorter ? sorter->stride(seq.dim() - 1) : 0,
                         *scalar, right);
      } else if (values->dtype() == seq.dtype()) {
        pos = search_row(s + row, step, n, sorter, srow, sorter ? sorter->stride(seq.dim() - 1) : 0,
                         load_value(values->data<const T>()[voff]), right);
      } else {  // mixed dtypes compare as doubles (exact but for int64 beyond 2^53)
        pos = search_row(s + row, step, n, sorter, srow, sorter ? sorter->stride(seq.dim() - 1) : 0,
                         load_as_double(*values, voff), right);
      }
      if (out_int32)
        out.data<int32_t>()[ooff] = static_cast<int32_t>(pos);
      else
        out.data<int64_t>()[ooff] = pos;
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < values->size(d)) break;
        idx[d] = 0;
      }
    }
  });
  return Error::Ok;
}

}  // namespace pteron
