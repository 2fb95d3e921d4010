// Element types, numbered as c10::ScalarType (the numbering `.pte` files carry).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron {

enum class ScalarType : int8_t {
  Byte = 0,    // uint8
  Char = 1,    // int8
  Short = 2,   // int16
  Int = 3,     // int32
  Long = 4,    // int64
  Half = 5,    // float16
  Float = 6,   // float32
  Double = 7,  // float64
  // Complex numbers: (real, imaginary) pairs of Half / Float / Double. Only the kernels ExecuTorch
  // also runs on them (_conj_physical, view_as_real_copy) and plain copies take them; the
  // compiler refuses them elsewhere.
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
  UInt16 = 27,
};

// 0 for types the runtime does not support; callers treat that as "unsupported dtype".
size_t element_size(ScalarType t);
bool is_supported(ScalarType t);
bool is_floating(ScalarType t);
bool is_integral(ScalarType t, bool include_bool);
bool is_complex(ScalarType t);
// The element type of one part of a complex type (Float for ComplexFloat); `t` itself otherwise.
ScalarType complex_part_type(ScalarType t);
const char* scalar_type_name(ScalarType t);

// IEEE binary16 and bfloat16 storage types with float conversion (round to nearest even).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
inline float bf16_to_float(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
uint16_t float_to_bf16(float value);

}  // namespace pteron
