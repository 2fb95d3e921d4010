// aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
//     Tensor(a!) out) -> Tensor(a!)
// aten::mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
// Sums accumulate in double. Reduced dims that form one block of a row-major input (the usual
// "last dims" or "H, W of NCHW") take vectorised outer x R x inner loops; anything else walks
// the reduced dims by stride.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr int kLanes = 8;
constexpr int64_t kChunk = 256;

// out[o * inner + i] = mean over r of x[(o * R + r) * inner + i].
template <typename T, typename Out>
void mean_blocks(const T* x, Out* y, int64_t outer, int64_t R, int64_t inner) {
  const double scale = 1.0 / static_cast<double>(R);
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * R * inner;
    if (inner == 1) {
      double lanes[kLanes] = {};
      int64_t r = 0;
      for (; r + kLanes <= R; r += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(load_value(xo[r + l]));
      double sum = 0;
      for (; r < R; ++r) sum += static_cast<double>(load_value(xo[r]));
      for (int l = 0; l < kLanes; ++l) sum += lanes[l];
      y[o] = store_value<Out>(sum * scale);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      const int64_t n = inner - i0 < kChunk ? inner - i0 : kChunk;
      double acc[kChunk];
      for (int64_t i = 0; i < n; ++i) acc[i] = 0;
      for (int64_t r = 0; r < R; ++r) {
        const T* row = xo + r * inner + i0;
        for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<double>(load_value(row[i]));
      }
      for (int64_t i = 0; i < n; ++i) y[o * inner + i0 + i] = store_value<Out>(acc[i] * scale);
    }
  }
}

// Any layout and any set of reduced dims: for every output element, walk the reduced dims.
void mean_strided(const Tensor& in, const bool* reduce, Tensor& out, bool keepdim) {
  const int32_t dim = in.dim();
  int32_t kept[kMaxTensorDim], red[kMaxTensorDim];
  int32_t nk = 0, nr = 0;
  int64_t R = 1;
  for (int32_t d = 0; d < dim; ++d) {
    if (reduce[d]) {
      red[nr++] = d;
      R *= in.size(d);
    } else {
      kept[nk++] = d;
    }
  }
  // Output dim of each kept input dim.
  int32_t out_dim[kMaxTensorDim];
  for (int32_t k = 0, o = 0, d = 0; d < dim; ++d) {
    if (!reduce[d]) out_dim[k++] = keepdim ? d : o++;
  }
  const double scale = 1.0 / static_cast<double>(R);
  int64_t kidx[kMaxTensorDim] = {0};
  const int64_t count = out.numel();
  for (int64_t n = 0; n < count; ++n) {
    int64_t in_base = 0, out_off = 0;
    for (int32_t k = 0; k < nk; ++k) {
      in_base += kidx[k] * in.stride(kept[k]);
      out_off += kidx[k] * out.stride(out_dim[k]);
    }
    double sum = 0;
    int64_t ridx[kMaxTensorDim] = {0};
    for (int64_t r = 0; r < R; ++r) {
      int64_t off = in_base;
      for (int32_t j = 0; j < nr; ++j) off += ridx[j] * in.stride(red[j]);
      sum += load_as_double(in, off);
      for (int32_t j = nr - 1; j >= 0 && ++ridx[j] == in.size(red[j]); --j) ridx[j] = 0;
    }
    store_from_double(out, out_off, sum * scale);
    for (int32_t k = nk - 1; k >= 0 && ++kidx[k] == in.size(kept[k]); --k) kidx[k] = 0;
  }
}

Error mean_impl(const char* op, const Tensor& in, const EValue& dims, bool keepdim,
                const EValue& dtype, Tensor& out) {
  const int32_t dim = in.dim();
  bool reduce[kMaxTensorDim] = {};
  const bool all = dims.is_none() || dims.int_list.empty();
  for (int32_t d = 0; d < dim; ++d) reduce[d] = all;
  if (!all) {
    for (const int64_t v : dims.int_list) {
      int32_t d = 0;
      PTERON_TRY(normalize_dim(op, v, dim, &d));
      if (dim > 0 && reduce[d]) {
        return fail(Error::InvalidArgument,
                    "%s: dim %d appears multiple times in the list of "
                    "dims",
                    op, d);
      }
      if (dim > 0) reduce[d] = true;
    }
  }
  if (!dtype.is_none() && static_cast<int64_t>(out.dtype()) != dtype.i) {
    return fail(Error::InvalidArgument, "%s: out dtype %s does not match dtype argument %lld", op,
                scalar_type_name(out.dtype()), static_cast<long long>(dtype.i));
  }
  if (dtype.is_none() && !is_floating(in.dtype())) {
    return fail(Error::InvalidArgument, "%s: input dtype %s needs a floating dtype argument", op,
                scalar_type_name(in.dtype()));
  }
  if (!is_floating(out.dtype()) || !is_supported(in.dtype())) {
    return fail(Error::NotSupported, "%s: dtypes %s -> %s not supported", op,
                scalar_type_name(in.dtype()), scalar_type_name(out.dtype()));
  }
  int32_t sizes[kMaxTensorDim];
  int32_t out_rank = 0;
  for (int32_t d = 0; d < dim; ++d) {
    if (!reduce[d])
      sizes[out_rank++] = in.size(d);
    else if (keepdim)
      sizes[out_rank++] = 1;
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, out_rank));
  if (out.numel() == 0) return Error::Ok;

  // Reduced dims forming one block [first, last] of a row-major input: outer x R x inner.
  int32_t first = dim, last = -1;
  for (int32_t d = 0; d < dim; ++d) {
    if (reduce[d]) {
      first = d < first ? d : first;
      last = d;
    }
  }
  bool block = is_row_major(in) && is_row_major(out) && in.dtype() == out.dtype();
  int64_t outer = 1, R = 1, inner = 1;
  for (int32_t d = 0; d < dim; ++d) {
    if (d < first)
      outer *= in.size(d);
    else if (d > last)
      inner *= in.size(d);
    else if (reduce[d])
      R *= in.size(d);
    else if (in.size(d) != 1)
      block = false;  // a kept dim inside the reduced block
  }
  if (block) {
    dispatch_float_dtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      mean_blocks<T, T>(in.data<const T>(), out.data<T>(), outer, R, inner);
    });
    return Error::Ok;
  }
  mean_strided(in, reduce, out, keepdim);
  return Error::Ok;
}

Error mean_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mean.out";
  return mean_impl(kOp, *args[0]->tensor, *args[1], args[2]->b, *args[3], *args[4]->tensor);
}

Error mean_dtype_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mean.dtype_out";
  const EValue all_dims;  // None: reduce everything
  return mean_impl(kOp, *args[0]->tensor, all_dims, false, *args[1], *args[2]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::mean.out", mean_out, "TlBiT");
PTERON_KERNEL("aten::mean.dtype_out", mean_dtype_out, "TiT");

}  // namespace pteron
