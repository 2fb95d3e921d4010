// Dtype dispatch over the floating-point types only. Unlike dispatch_dtype(..., kFloatTypes,
// ...), integer types are never instantiated, so the body may call templates that exist only
// for float, double, Half and BFloat16 (gemm, conv helpers) even in unoptimised builds.
#pragma once

#include "kernels/portable/util/dtype.h"

namespace pteron {

// Calls fn(TypeTag<T>{}) for T in float, double, Half, BFloat16; false for any other dtype.
template <typename Fn>
bool dispatch_float_dtype(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Float:
      fn(TypeTag<float>{});
      return true;
    case ScalarType::Double:
      fn(TypeTag<double>{});
      return true;
    case ScalarType::Half:
      fn(TypeTag<Half>{});
      return true;
    case ScalarType::BFloat16:
      fn(TypeTag<BFloat16>{});
      return true;
    default:
      return false;
  }
}

}  // namespace pteron
