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
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<Half> {
  using type = float;
};
template <>
struct ComputeType<BFloat16> {
  using type = float;
};

template <typename T>
inline typename ComputeType<T>::type load_value(const T& v) {
  return v;
}
// A bool element is read as its byte: tensor memory comes from files and callers, and a byte
// other than 0 or 1 read as `bool` is undefined behaviour (the fuzzer found 255s). Non-zero is
// true, as torch treats such bytes.
template <>
inline bool load_value<bool>(const bool& v) {
  uint8_t byte;
  __builtin_memcpy(&byte, &v, 1);
  return byte != 0;
}
template <>
inline float load_value<Half>(const Half& v) {
  return half_bits_to_float(v.bits);
}
template <>
inline float load_value<BFloat16>(const BFloat16& v) {
  return bf16_bits_to_float(v.bits);
}

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
enum DtypeSet : unsigned {
  kFloatTypes = 1,
  kIntTypes = 2,
  kBoolType = 4,
  kRealTypes = 3,
  kAllTypes = 7
};

template <typename Fn>
bool dispatch_dtype(ScalarType t, unsigned set, Fn&& fn) {
  switch (t) {
    case ScalarType::Float:
      if (set & kFloatTypes) {
        fn(TypeTag<float>{});
        return true;
      }
      break;
    case ScalarType::Double:
      if (set & kFloatTypes) {
        fn(TypeTag<double>{});
        return true;
      }
      break;
    case ScalarType::Half:
      if (set & kFloatTypes) {
        fn(TypeTag<Half>{});
        return true;
      }
      break;
    case ScalarType::BFloat16:
      if (set & kFloatTypes) {
        fn(TypeTag<BFloat16>{});
        return true;
      }
      break;
    case ScalarType::Byte:
      if (set & kIntTypes) {
        fn(TypeTag<uint8_t>{});
        return true;
      }
      break;
    case ScalarType::Char:
      if (set & kIntTypes) {
        fn(TypeTag<int8_t>{});
        return true;
      }
      break;
    case ScalarType::Short:
      if (set & kIntTypes) {
        fn(TypeTag<int16_t>{});
        return true;
      }
      break;
    case ScalarType::Int:
      if (set & kIntTypes) {
        fn(TypeTag<int32_t>{});
        return true;
      }
      break;
    case ScalarType::Long:
      if (set & kIntTypes) {
        fn(TypeTag<int64_t>{});
        return true;
      }
      break;
    case ScalarType::Bool:
      if (set & kBoolType) {
        fn(TypeTag<bool>{});
        return true;
      }
      break;
    default:
      break;
  }
  return false;
}

// Calls fn(TypeTag<T>{}) when T's group is in kSet; compiled out (returning false) otherwise.
template <typename T, unsigned kGroup, unsigned kSet, typename Fn>
bool call_if_in_set(Fn& fn) {
  if constexpr ((kSet & kGroup) != 0) {
    fn(TypeTag<T>{});
    return true;
  } else {
    return false;
  }
}

// Like dispatch_dtype, but the set is a compile-time constant, so fn is only instantiated for
// the types in it (smaller code, and fn need not compile for the others).
template <unsigned kSet, typename Fn>
bool dispatch_dtype_in(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Float:
      return call_if_in_set<float, kFloatTypes, kSet>(fn);
    case ScalarType::Double:
      return call_if_in_set<double, kFloatTypes, kSet>(fn);
    case ScalarType::Half:
      return call_if_in_set<Half, kFloatTypes, kSet>(fn);
    case ScalarType::BFloat16:
      return call_if_in_set<BFloat16, kFloatTypes, kSet>(fn);
    case ScalarType::Byte:
      return call_if_in_set<uint8_t, kIntTypes, kSet>(fn);
    case ScalarType::Char:
      return call_if_in_set<int8_t, kIntTypes, kSet>(fn);
    case ScalarType::Short:
      return call_if_in_set<int16_t, kIntTypes, kSet>(fn);
    case ScalarType::Int:
      return call_if_in_set<int32_t, kIntTypes, kSet>(fn);
    case ScalarType::Long:
      return call_if_in_set<int64_t, kIntTypes, kSet>(fn);
    case ScalarType::Bool:
      return call_if_in_set<bool, kBoolType, kSet>(fn);
    default:
      return false;
  }
}

}  // namespace pteron
