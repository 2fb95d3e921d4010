#include "kernels/portable/util/matmul.h"

namespace pteron {

Error expect_rank(const char* op, const char* what, const Tensor& t, int32_t dim) {
  if (t.dim() != dim) {
    return fail(Error::InvalidArgument, "%s: %s must be %d-D, got %d-D", op, what, dim, t.dim());
  }
  return Error::Ok;
}

Error expect_float_dtypes(const char* op, const Tensor& out, const Tensor* const* inputs,
                          int count) {
  if (!is_floating(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point only)", op,
                scalar_type_name(out.dtype()));
  }
  for (int i = 0; i < count; ++i) {
    if (inputs[i]->dtype() != out.dtype()) {
      return fail(Error::InvalidArgument, "%s: input dtype %s differs from out dtype %s", op,
                  scalar_type_name(inputs[i]->dtype()), scalar_type_name(out.dtype()));
    }
  }
  return Error::Ok;
}

Error expect_matmul_dtypes(const char* op, const Tensor& out, const Tensor* const* inputs,
                           int count) {
  // The integer types the portable dispatch instantiates (uint16 and friends stay refused).
  if (!dispatch_dtype_in<kIntTypes>(out.dtype(), [](auto) {})) {
    return expect_float_dtypes(op, out, inputs, count);
  }
  for (int i = 0; i < count; ++i) {
    if (inputs[i]->dtype() != out.dtype()) {
      return fail(Error::InvalidArgument, "%s: input dtype %s differs from out dtype %s", op,
                  scalar_type_name(inputs[i]->dtype()), scalar_type_name(out.dtype()));
    }
  }
  return Error::Ok;
}

Error expect_broadcasts_to(const char* op, const Tensor& bias, const Tensor& out) {
  if (bias.dim() > out.dim()) {
    return fail(Error::InvalidArgument, "%s: bias of rank %d does not broadcast to rank %d", op,
                bias.dim(), out.dim());
  }
  const int32_t lead = out.dim() - bias.dim();
  for (int32_t d = 0; d < bias.dim(); ++d) {
    if (bias.size(d) != 1 && bias.size(d) != out.size(lead + d)) {
      return fail(Error::InvalidArgument, "%s: bias dim %d of size %d does not broadcast to %d", op,
                  d, bias.size(d), out.size(lead + d));
    }
  }
  return Error::Ok;
}

bool flat_row_stride(const Tensor& t, int64_t* row_stride) {
  // Walk the leading dims from the innermost; size-1 dims may have any stride.
  int64_t expected = -1;
  *row_stride = 0;
  for (int32_t d = t.dim() - 2; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (expected < 0) {
      *row_stride = t.stride(d);
    } else if (t.stride(d) != expected) {
      return false;
    }
    expected = t.stride(d) * t.size(d);
  }
  return true;
}

Error broadcast_copy(const char* op, const Tensor& bias, Tensor& out) {
  PTERON_TRY(expect_broadcasts_to(op, bias, out));
  const int32_t dim = out.dim();
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < dim; ++d) sizes[d] = out.size(d);
  int64_t so[kMaxTensorDim], sb[kMaxTensorDim];
  broadcast_strides(out, sizes, dim, so);
  broadcast_strides(bias, sizes, dim, sb);
  if (bias.dtype() == out.dtype()) {
    dispatch_dtype(out.dtype(), kAllTypes, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = bias.data<const T>();
      T* dst = out.data<T>();
      for_each_row3(sizes, dim, so, sb, sb,
                    [&](int64_t o, int64_t b, int64_t, int64_t n, int64_t os, int64_t bs, int64_t) {
                      for (int64_t k = 0; k < n; ++k) dst[o + k * os] = src[b + k * bs];
                    });
    });
    return Error::Ok;
  }
  if (!is_supported(bias.dtype())) {
    return fail(Error::NotSupported, "%s: bias dtype %s not supported", op,
                scalar_type_name(bias.dtype()));
  }
  for_each_row3(sizes, dim, so, sb, sb,
                [&](int64_t o, int64_t b, int64_t, int64_t n, int64_t os, int64_t bs, int64_t) {
                  for (int64_t k = 0; k < n; ++k)
                    store_from_double(out, o + k * os, load_as_double(bias, b + k * bs));
                });
  return Error::Ok;
}

}  // namespace pteron
