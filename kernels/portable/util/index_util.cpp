#include "kernels/portable/util/index_util.h"

namespace pteron {

Error expect_index_dtype(const char* op, const Tensor& t, const char* what, bool allow_int32) {
  if (t.dtype() == ScalarType::Long || (allow_int32 && t.dtype() == ScalarType::Int)) {
    return Error::Ok;
  }
  return fail(Error::InvalidArgument, "%s: %s must be int64%s, got %s", op, what,
              allow_int32 ? " or int32" : "", scalar_type_name(t.dtype()));
}

namespace {

template <typename I>
Error check_range(const char* op, const I* p, int64_t n, int64_t size, int32_t dim,
                  bool allow_negative) {
  const int64_t lo = allow_negative ? -size : 0;
  bool ok = true;
  for (int64_t k = 0; k < n; ++k) ok &= p[k] >= lo && p[k] < size;  // branch-free scan
  if (ok) return Error::Ok;
  for (int64_t k = 0; k < n; ++k) {
    if (p[k] < lo || p[k] >= size) {
      return fail(Error::OutOfRange,
                  "%s: index %lld is out of bounds for dimension %d with size %lld", op,
                  static_cast<long long>(p[k]), dim, static_cast<long long>(size));
    }
  }
  return Error::Ok;
}

}  // namespace

Error check_indices(const char* op, const Tensor& t, int64_t size, int32_t dim,
                    bool allow_negative) {
  // Index tensors are dense, so their numel elements are exactly the storage.
  if (t.dtype() == ScalarType::Long) {
    return check_range(op, t.data<const int64_t>(), t.numel(), size, dim, allow_negative);
  }
  return check_range(op, t.data<const int32_t>(), t.numel(), size, dim, allow_negative);
}

}  // namespace pteron
