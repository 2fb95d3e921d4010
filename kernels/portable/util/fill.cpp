#include "kernels/portable/util/fill.h"

#include <type_traits>

#include "kernels/portable/util/dtype.h"

namespace pteron {

Error fill_scalar(const char* op, Tensor& t, const EValue& value) {
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
