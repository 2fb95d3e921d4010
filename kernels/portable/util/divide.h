// Division with torch's rounding modes, shared by div, floor_divide-like and remainder ops.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace pteron {

enum class Rounding { kTrue, kTrunc, kFloor };

// x / y for integer C without the traps C++ leaves in: y == 0 sets *zero (torch raises
// ZeroDivisionError) and MIN / -1 wraps like torch instead of faulting.
template <Rounding M, typename C>
inline C int_divide(C x, C y, bool* zero) {
  if (y == 0) {
    *zero = true;
    return 0;
  }
  if constexpr (std::is_signed_v<C>) {
    if (y == -1) return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(x));
  }
  C q = static_cast<C>(x / y);
  if constexpr (M == Rounding::kFloor && std::is_signed_v<C>) {
    if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  }
  return q;
}

// torch's div_floor_floating: floor(x / y) computed from fmod so it is exact.
template <typename C>
inline C float_floor_divide(C a, C b) {
  if (b == 0) return a / b;
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
  if (div == 0) return std::copysign(C(0), a / b);
  C floordiv = std::floor(div);
  if (div - floordiv > C(0.5)) floordiv += C(1);
  return floordiv;
}

// Python-style remainder (sign of the divisor) and C-style fmod (sign of the dividend).
template <typename C>
inline C remainder_value(C a, C b, bool* zero) {
  if constexpr (std::is_floating_point_v<C>) {
    C mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  } else {
    if (b == 0) {
      *zero = true;
      return 0;
    }
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return 0;
    }
    C mod = static_cast<C>(a % b);
    if constexpr (std::is_signed_v<C>) {
      if (mod != 0 && (b < 0) != (mod < 0)) mod = static_cast<C>(mod + b);
    }
    return mod;
  }
}

template <typename C>
inline C fmod_value(C a, C b, bool* zero) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::fmod(a, b);
  } else {
    if (b == 0) {
      *zero = true;
      return 0;
    }
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return 0;
    }
    return static_cast<C>(a % b);
  }
}

}  // namespace pteron
