// Integer add/multiply that wrap like torch's two's-complement tensor arithmetic instead of
// overflowing (undefined behaviour in C++); floats and bool use plain arithmetic.
#pragma once

#include <cstdint>
#include <type_traits>

namespace pteron {

template <typename C>
using WrappingUnsigned =  // at least 32 bits, so operands never promote to (signed) int
    std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

template <typename C>
inline C wrapping_add(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = WrappingUnsigned<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<C>(a + b);
  }
}

template <typename C>
inline C wrapping_mul(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = WrappingUnsigned<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<C>(a * b);
  }
}

// a - alpha * b, wrapping for integers.
template <typename C>
inline C wrapping_sub_scaled(C a, C alpha, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = WrappingUnsigned<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(alpha) * static_cast<U>(b));
  } else {
    return static_cast<C>(a - alpha * b);
  }
}

}  // namespace pteron
