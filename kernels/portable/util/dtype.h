// Dtype dispatch for kernels: map a runtime ScalarType to a C++ type once, at the top of a
// kernel, so the loop below is a plain typed loop the compiler can vectorise.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/half.h"
#include "runtime/core/scalar_type.h"

namespace pteron {

template <typename T>
struct TypeTag {
  using type = T;
};

// Arithmetic type used to compute on a storage type (Half and BFloat16 compute in float).
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };

template <typename T>
inline typename ComputeType<T>::type load_value(const T& v) { return v; }
template <>
inline float load_value<Half>(const Half& v) { return half_bits_to_float(v.bits); }
template <>
inline float load_value<BFloat16>(const BFloat16& v) { return bf16_bits_to_float(v.bits); }

template <typename T, typename V>
inline T store_value(V v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{float_to_half_bits(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{float_to_bf16_bits(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V(0);
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    // Float to int is undefined behaviour out of range; go through int64 and wrap (what torch
    // does on common CPUs). NaN and values beyond int64 become 0.
    if (!(v > -9.2e18 && v < 9.2e18)) return T(0);
    return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else {
    return static_cast<T>(v);
  }
}

// Calls fn(TypeTag<T>{}) for the C++ type of `t`. Returns false if `t` is not in the set.
// Sets: Float (float, double, half, bf16), Int (uint8..int64), Bool.
enum DtypeSet : unsigned { kFloatTypes = 1, kIntTypes = 2, kBoolType = 4, kRealTypes = 3, kAllTypes = 7 };

template <typename Fn>
bool dispatch_dtype(ScalarType t, unsigned set, Fn&& fn) {
  switch (t) {
    case ScalarType::Float: if (set & kFloatTypes) { fn(TypeTag<float>{}); return true; } break;
    case ScalarType::Double: if (set & kFloatTypes) { fn(TypeTag<double>{}); return true; } break;
    case ScalarType::Half: if (set & kFloatTypes) { fn(TypeTag<Half>{}); return true; } break;
    case ScalarType::BFloat16: if (set & kFloatTypes) { fn(TypeTag<BFloat16>{}); return true; } break;
    case ScalarType::Byte: if (set & kIntTypes) { fn(TypeTag<uint8_t>{}); return true; } break;
    case ScalarType::Char: if (set & kIntTypes) { fn(TypeTag<int8_t>{}); return true; } break;
    case ScalarType::Short: if (set & kIntTypes) { fn(TypeTag<int16_t>{}); return true; } break;
    case ScalarType::Int: if (set & kIntTypes) { fn(TypeTag<int32_t>{}); return true; } break;
    case ScalarType::Long: if (set & kIntTypes) { fn(TypeTag<int64_t>{}); return true; } break;
    case ScalarType::Bool: if (set & kBoolType) { fn(TypeTag<bool>{}); return true; } break;
    default: break;
  }
  return false;
}

}  // namespace pteron
