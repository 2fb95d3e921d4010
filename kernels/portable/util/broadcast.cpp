#include "kernels/portable/util/broadcast.h"

#include "kernels/portable/util/dtype.h"

namespace pteron {

Error broadcast_shape(const char* op, const Tensor& a, const Tensor& b, int32_t* out_sizes,
                      int32_t* out_dim) {
  const int32_t dim = a.dim() > b.dim() ? a.dim() : b.dim();
  for (int32_t i = 0; i < dim; ++i) {
    const int32_t ai = i - (dim - a.dim());
    const int32_t bi = i - (dim - b.dim());
    const int32_t as = ai >= 0 ? a.size(ai) : 1;
    const int32_t bs = bi >= 0 ? b.size(bi) : 1;
    if (as != bs && as != 1 && bs != 1) {
      return fail(Error::InvalidArgument, "%s: shapes do not broadcast (dim %d: %d vs %d)", op, i,
                  as, bs);
    }
    out_sizes[i] = as == 1 ? bs : as;
  }
  *out_dim = dim;
  return Error::Ok;
}

Error broadcast_shapes(const char* op, Span<const Tensor* const> ts, int32_t* out_sizes,
                       int32_t* out_dim) {
  int32_t dim = 0;
  for (const Tensor* t : ts) {
    if (t->dim() > kMaxTensorDim) {
      return fail(Error::NotSupported, "%s: rank %d above %d", op, t->dim(), kMaxTensorDim);
    }
    if (t->dim() > dim) dim = t->dim();
  }
  for (int32_t i = 0; i < dim; ++i) out_sizes[i] = 1;
  for (const Tensor* t : ts) {
    const int32_t lead = dim - t->dim();
    for (int32_t i = lead; i < dim; ++i) {
      const int32_t s = t->size(i - lead);
      if (s == out_sizes[i] || s == 1) continue;
      if (out_sizes[i] != 1) {
        return fail(Error::InvalidArgument, "%s: shapes do not broadcast (dim %d: %d vs %d)", op, i,
                    out_sizes[i], s);
      }
      out_sizes[i] = s;
    }
  }
  *out_dim = dim;
  return Error::Ok;
}

Error expect_out_shape(const char* op, Tensor& out, const int32_t* sizes, int32_t dim) {
  if (out.dim() != dim) {
    return fail(Error::InvalidArgument, "%s: out has rank %d, expected %d", op, out.dim(), dim);
  }
  const Error e = out.resize(Span<const int32_t>(sizes, static_cast<size_t>(dim)));
  if (e != Error::Ok) {
    return fail(e, "%s: out shape does not match the result (%s)", op, last_error_message());
  }
  return Error::Ok;
}

void broadcast_strides(const Tensor& t, const int32_t* out_sizes, int32_t out_dim,
                       int64_t* strides) {
  const int32_t lead = out_dim - t.dim();
  for (int32_t i = 0; i < out_dim; ++i) {
    const int32_t ti = i - lead;
    strides[i] = (ti < 0 || (t.size(ti) == 1 && out_sizes[i] != 1)) ? 0 : t.stride(ti);
  }
}

double load_as_double(const Tensor& t, int64_t offset) {
  double v = 0;
  dispatch_dtype(t.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(load_value(t.data<const T>()[offset]));
  });
  return v;
}

void store_from_double(Tensor& t, int64_t offset, double v) {
  dispatch_dtype(t.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.data<T>()[offset] = store_value<T>(v);
  });
}

Error normalize_dim(const char* op, int64_t d, int32_t dim, int32_t* out) {
  const int32_t n = dim == 0 ? 1 : dim;  // a 0-d tensor accepts dim 0 and -1
  if (d < -n || d >= n) {
    return fail(Error::InvalidArgument, "%s: dim %lld out of range for a %d-d tensor", op,
                static_cast<long long>(d), dim);
  }
  *out = static_cast<int32_t>(d < 0 ? d + n : d);
  return Error::Ok;
}

}  // namespace pteron
