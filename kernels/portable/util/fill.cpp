#include "kernels/portable/util/fill.h"

#include <type_traits>

#include "kernels/portable/util/dtype.h"

namespace pteron {

Error fill_scalar(const char* op, Tensor& t, const EValue& value) {
  // A complex tensor takes the (real) scalar as (value, 0): constant_pad_nd before an FFT.
  if (t.dtype() == ScalarType::ComplexFloat || t.dtype() == ScalarType::ComplexDouble) {
    const double v = value.scalar_as_double();
    const int64_t n = t.numel();
    if (t.dtype() == ScalarType::ComplexFloat) {
      float* p = t.data<float>();
      for (int64_t k = 0; k < n; ++k) p[2 * k] = static_cast<float>(v), p[2 * k + 1] = 0.0f;
    } else {
      double* p = t.data<double>();
      for (int64_t k = 0; k < n; ++k) p[2 * k] = v, p[2 * k + 1] = 0.0;
    }
    return Error::Ok;
  }
  const bool ok = dispatch_dtype(t.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      v = value.tag == Tag::Int ? static_cast<T>(value.i)
                                : static_cast<T>(value.scalar_as_double());
    } else {
      v = store_value<T>(value.scalar_as_double());
    }
    T* p = t.data<T>();
    const int64_t n = t.numel();  // dense: every element of the storage belongs to the tensor
    for (int64_t k = 0; k < n; ++k) p[k] = v;
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", op, scalar_type_name(t.dtype()));
  }
  return Error::Ok;
}

}  // namespace pteron
