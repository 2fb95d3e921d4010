#include "kernels/portable/util/strided_copy.h"

#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"

namespace pteron {
namespace {

// A copy's loop nest after normalising: dims in destination memory order (outermost first),
// size-1 dims dropped, dims that are contiguous on both sides merged.
struct CopyLoops {
  int32_t n = 0;
  int64_t size[kMaxCopyDim];
  int64_t ds[kMaxCopyDim];  // destination strides
  int64_t ss[kMaxCopyDim];  // source strides
};

inline int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

// Returns false when the block is empty.
bool normalize(const int64_t* sizes, int32_t dim, const int64_t* ds, const int64_t* ss,
               CopyLoops* c) {
  c->n = 0;
  for (int32_t d = 0; d < dim; ++d) {
    if (sizes[d] == 0) return false;
    if (sizes[d] == 1) continue;
    // Insertion sort by destination stride (then source stride), largest first, so the walk
    // writes the destination in order.
    int32_t i = c->n++;
    while (i > 0 && (abs64(c->ds[i - 1]) < abs64(ds[d]) ||
                     (abs64(c->ds[i - 1]) == abs64(ds[d]) && abs64(c->ss[i - 1]) < abs64(ss[d])))) {
      c->size[i] = c->size[i - 1];
      c->ds[i] = c->ds[i - 1];
      c->ss[i] = c->ss[i - 1];
      --i;
    }
    c->size[i] = sizes[d];
    c->ds[i] = ds[d];
    c->ss[i] = ss[d];
  }
  // Merge an outer dim into the inner one when both sides step over it contiguously.
  int32_t m = 0;
  for (int32_t i = 0; i < c->n; ++i) {
    if (m > 0 && c->ds[m - 1] == c->ds[i] * c->size[i] && c->ss[m - 1] == c->ss[i] * c->size[i]) {
      c->size[m - 1] *= c->size[i];
      c->ds[m - 1] = c->ds[i];
      c->ss[m - 1] = c->ss[i];
    } else {
      c->size[m] = c->size[i];
      c->ds[m] = c->ds[i];
      c->ss[m] = c->ss[i];
      ++m;
    }
  }
  c->n = m;
  if (m == 0) {  // a single element
    c->n = 1;
    c->size[0] = 1;
    c->ds[0] = 1;
    c->ss[0] = 1;
  }
  return true;
}

// Calls fn(dst_offset, src_offset) for every index of dims [0, m) except `skip`.
template <typename Fn>
void for_each_outer(const CopyLoops& c, int32_t m, int32_t skip, Fn&& fn) {
  int64_t idx[kMaxCopyDim] = {0};
  int64_t d = 0, s = 0;
  while (true) {
    fn(d, s);
    int32_t k = m - 1;
    for (; k >= 0; --k) {
      if (k == skip) continue;
      if (++idx[k] < c.size[k]) {
        d += c.ds[k];
        s += c.ss[k];
        break;
      }
      d -= c.ds[k] * (c.size[k] - 1);
      s -= c.ss[k] * (c.size[k] - 1);
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

template <typename W>
void copy_row(W* dst, int64_t ds, const W* src, int64_t ss, int64_t n) {
  if (ds == 1 && ss == 1) {
    std::memmove(dst, src, static_cast<size_t>(n) * sizeof(W));  // see copy_logical_order
  } else if (ds == 1 && ss == 0) {
    const W v = *src;
    for (int64_t k = 0; k < n; ++k) dst[k] = v;
  } else if (ds == 1) {
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k * ss];
  } else {
    for (int64_t k = 0; k < n; ++k) dst[k * ds] = src[k * ss];
  }
}

// Dims `a` (contiguous in the source) and `b` (innermost in the destination) walked in square
// tiles, so neither side strides through memory a whole row at a time (transposes, NCHW<->NHWC).
template <typename W>
void copy_tiled(W* dst, const W* src, const CopyLoops& c, int32_t a, int32_t b) {
  constexpr int64_t kTile = 32;
  const int64_t na = c.size[a], nb = c.size[b];
  const int64_t dsa = c.ds[a], dsb = c.ds[b], ssa = c.ss[a], ssb = c.ss[b];
  for_each_outer(c, b, a, [&](int64_t d0, int64_t s0) {
    for (int64_t i0 = 0; i0 < na; i0 += kTile) {
      const int64_t i1 = i0 + kTile < na ? i0 + kTile : na;
      for (int64_t j0 = 0; j0 < nb; j0 += kTile) {
        const int64_t j1 = j0 + kTile < nb ? j0 + kTile : nb;
        for (int64_t i = i0; i < i1; ++i) {
          W* drow = dst + d0 + i * dsa;
          const W* srow = src + s0 + i * ssa;
          for (int64_t j = j0; j < j1; ++j) drow[j * dsb] = srow[j * ssb];
        }
      }
    }
  });
}

template <typename W>
void copy_words(void* dst_v, const void* src_v, const CopyLoops& c) {
  W* dst = static_cast<W*>(dst_v);
  const W* src = static_cast<const W*>(src_v);
  const int32_t inner = c.n - 1;
  if (c.ss[inner] != 1 && c.ss[inner] != 0) {
    for (int32_t a = inner - 1; a >= 0; --a) {
      if (c.ss[a] == 1) {
        copy_tiled(dst, src, c, a, inner);
        return;
      }
    }
  }
  const int64_t n = c.size[inner], ds = c.ds[inner], ss = c.ss[inner];
  for_each_outer(c, inner, -1,
                 [&](int64_t d, int64_t s) { copy_row(dst + d, ds, src + s, ss, n); });
}

template <typename D, typename S>
void convert_loops(void* dst_v, const void* src_v, const CopyLoops& c) {
  D* dst = static_cast<D*>(dst_v);
  const S* src = static_cast<const S*>(src_v);
  const int32_t inner = c.n - 1;
  const int64_t n = c.size[inner], ds = c.ds[inner], ss = c.ss[inner];
  for_each_outer(c, inner, -1, [&](int64_t d0, int64_t s0) {
    D* drow = dst + d0;
    const S* srow = src + s0;
    if (ds == 1 && ss == 1) {
      for (int64_t k = 0; k < n; ++k) drow[k] = store_value<D>(load_value(srow[k]));
    } else {
      for (int64_t k = 0; k < n; ++k) drow[k * ds] = store_value<D>(load_value(srow[k * ss]));
    }
  });
}

}  // namespace

void strided_copy(void* dst, const int64_t* dst_strides, const void* src,
                  const int64_t* src_strides, const int64_t* sizes, int32_t dim, size_t elem_size) {
  CopyLoops c;
  if (!normalize(sizes, dim, dst_strides, src_strides, &c)) return;
  if (c.n == 1 && c.ds[0] == 1 && c.ss[0] == 1) {
    std::memmove(dst, src, static_cast<size_t>(c.size[0]) * elem_size);  // see copy_logical_order
    return;
  }
  switch (elem_size) {
    case 1:
      copy_words<Word1>(dst, src, c);
      break;
    case 2:
      copy_words<Word2>(dst, src, c);
      break;
    case 4:
      copy_words<Word4>(dst, src, c);
      break;
    case 8:
      copy_words<Word8>(dst, src, c);
      break;
    case 16:
      copy_words<Word16>(dst, src, c);
      break;
    default:
      break;  // no supported dtype has another size
  }
}

bool strided_copy_convert(void* dst, ScalarType dst_type, const int64_t* dst_strides,
                          const void* src, ScalarType src_type, const int64_t* src_strides,
                          const int64_t* sizes, int32_t dim) {
  if (dst_type == src_type) {
    if (!is_supported(dst_type)) return false;
    strided_copy(dst, dst_strides, src, src_strides, sizes, dim, element_size(dst_type));
    return true;
  }
  bool ok = false;
  CopyLoops c;
  const bool non_empty = normalize(sizes, dim, dst_strides, src_strides, &c);
  dispatch_dtype(src_type, kAllTypes, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    ok = dispatch_dtype(dst_type, kAllTypes, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      if (non_empty) convert_loops<D, S>(dst, src, c);
    });
  });
  return ok;
}

void tensor_strides(const Tensor& t, int64_t* strides) {
  for (int32_t d = 0; d < t.dim(); ++d) strides[d] = t.stride(d);
}

void tensor_sizes(const Tensor& t, int64_t* sizes) {
  for (int32_t d = 0; d < t.dim(); ++d) sizes[d] = t.size(d);
}

Error copy_tensor(const char* op, const Tensor& src, Tensor& dst) {
  PTERON_TRY(expect_out_shape(op, dst, src.sizes().data(), src.dim()));
  int64_t sizes[kMaxTensorDim], ss[kMaxTensorDim], ds[kMaxTensorDim];
  tensor_sizes(src, sizes);
  tensor_strides(src, ss);
  tensor_strides(dst, ds);
  if (!strided_copy_convert(dst.mutable_data(), dst.dtype(), ds, src.const_data(), src.dtype(), ss,
                            sizes, src.dim())) {
    return fail(Error::NotSupported, "%s: copy from %s to %s not supported", op,
                scalar_type_name(src.dtype()), scalar_type_name(dst.dtype()));
  }
  return Error::Ok;
}

Error copy_same_dtype(const char* op, const Tensor& self, Tensor& out) {
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  return copy_tensor(op, self, out);
}

void copy_view(const Tensor& src, int64_t src_offset, const int64_t* src_strides, Tensor& dst) {
  if (dst.numel() == 0) return;
  int64_t sizes[kMaxTensorDim], ds[kMaxTensorDim];
  tensor_sizes(dst, sizes);
  tensor_strides(dst, ds);
  strided_copy(dst.mutable_data(), ds, byte_ptr(src, src_offset), src_strides, sizes, dst.dim(),
               dst.element_size());
}

bool copy_into_view(const Tensor& src, Tensor& dst, int64_t dst_offset,
                    const int64_t* dst_strides) {
  if (src.numel() == 0) return is_supported(src.dtype()) && is_supported(dst.dtype());
  int64_t sizes[kMaxTensorDim], ss[kMaxTensorDim];
  tensor_sizes(src, sizes);
  tensor_strides(src, ss);
  return strided_copy_convert(byte_ptr(dst, dst_offset), dst.dtype(), dst_strides, src.const_data(),
                              src.dtype(), ss, sizes, src.dim());
}

Error expect_dtype(const char* op, const Tensor& t, ScalarType want, const char* what) {
  if (t.dtype() != want) {
    return fail(Error::InvalidArgument, "%s: %s has dtype %s, expected %s", op, what,
                scalar_type_name(t.dtype()), scalar_type_name(want));
  }
  return Error::Ok;
}

namespace {

// Walks a tensor in logical row-major order, one run of its innermost (merged) dim at a time.
struct LogicalCursor {
  int32_t n = 0;
  int64_t size[kMaxTensorDim], stride[kMaxTensorDim], idx[kMaxTensorDim];
  int64_t offset = 0;

  explicit LogicalCursor(const Tensor& t) {
    for (int32_t d = 0; d < t.dim(); ++d) {
      if (t.size(d) == 1) continue;
      if (n > 0 && stride[n - 1] == static_cast<int64_t>(t.stride(d)) * t.size(d)) {
        size[n - 1] *= t.size(d);
        stride[n - 1] = t.stride(d);
      } else {
        size[n] = t.size(d);
        stride[n] = t.stride(d);
        ++n;
      }
    }
    if (n == 0) {
      n = 1;
      size[0] = 1;
      stride[0] = 1;
    }
    for (int32_t d = 0; d < n; ++d) idx[d] = 0;
  }
  int64_t run_left() const { return size[n - 1] - idx[n - 1]; }
  int64_t run_stride() const { return stride[n - 1]; }
  void advance(int64_t k) {
    idx[n - 1] += k;
    offset += k * stride[n - 1];
    for (int32_t d = n - 1; d > 0 && idx[d] == size[d]; --d) {
      offset -= stride[d] * size[d];
      idx[d] = 0;
      ++idx[d - 1];
      offset += stride[d - 1];
    }
  }
};

template <typename W>
void copy_runs(const Tensor& src, Tensor& dst) {
  LogicalCursor s(src), d(dst);
  const W* sp = src.data<const W>();
  W* dp = dst.data<W>();
  int64_t left = src.numel();
  while (left > 0) {
    const int64_t sl = s.run_left(), dl = d.run_left();
    const int64_t k = sl < dl ? sl : dl;
    copy_row(dp + d.offset, d.run_stride(), sp + s.offset, s.run_stride(), k);
    s.advance(k);
    d.advance(k);
    left -= k;
  }
}

}  // namespace

void copy_logical_order(const Tensor& src, Tensor& dst) {
  if (src.numel() == 0) return;
  if (src.is_contiguous() && dst.is_contiguous()) {
    // memmove: a program's memory plan may place the source and destination of a copy over each
    // other (a file is never trusted: the fuzzer made view_copy's out overlap its input), and
    // overlapping memcpy is undefined; the values are then the program's problem, not UB.
    std::memmove(dst.mutable_data(), src.const_data(), src.nbytes());
    return;
  }
  switch (src.element_size()) {
    case 1:
      copy_runs<Word1>(src, dst);
      break;
    case 2:
      copy_runs<Word2>(src, dst);
      break;
    case 4:
      copy_runs<Word4>(src, dst);
      break;
    case 8:
      copy_runs<Word8>(src, dst);
      break;
    default:
      break;
  }
}

}  // namespace pteron
