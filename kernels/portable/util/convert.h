// Converting runs of elements between dtypes, for copies (_to_copy) and the mixed-dtype paths
// of elementwise drivers (which convert a chunk to double, compute, and convert back).
#pragma once

#include <cstdint>

#include "kernels/portable/util/dtype.h"
#include "runtime/core/evalue.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace pteron {

// True if `t` is in `set` (a DtypeSet mask).
inline bool dtype_in(ScalarType t, unsigned set) {
  return dispatch_dtype(t, set, [](auto) {});
}

// dst[i * dst_step] = (to) src[i * src_step] for i < n; steps in elements. Conversions follow
// C++ casts as torch does (float -> int truncates, int narrowing wraps, x -> bool is x != 0).
// Returns false (and converts nothing) if either dtype is unsupported.
bool convert_elements(ScalarType from, const void* src, int64_t src_step, ScalarType to, void* dst,
                      int64_t dst_step, int64_t n);

// Address of element `offset` of a tensor's data.
inline const void* element_ptr(const Tensor& t, int64_t offset) {
  return static_cast<const char*>(t.const_data()) + offset * static_cast<int64_t>(t.element_size());
}
inline void* element_ptr(Tensor& t, int64_t offset) {
  return static_cast<char*>(t.mutable_data()) + offset * static_cast<int64_t>(t.element_size());
}

// Chunk length of the mixed-dtype paths: a double buffer of this many elements lives on the
// stack, small enough for microcontroller stacks.
constexpr int64_t kConvertChunk = 64;

// Calls fn(TypeTag<U>{}) with the unsigned integer type of `bytes` bytes, for kernels that move
// elements without looking at their values (where, masked_fill, copies). False for other sizes.
template <typename Fn>
bool dispatch_by_size(size_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return (fn(TypeTag<uint8_t>{}), true);
    case 2:
      return (fn(TypeTag<uint16_t>{}), true);
    case 4:
      return (fn(TypeTag<uint32_t>{}), true);
    case 8:
      return (fn(TypeTag<uint64_t>{}), true);
  }
  return false;
}

// The bytes of Scalar `s` converted to dtype `t` (Int scalars exactly, Double via double),
// stored from the first byte of the result, ready to be copied out with dispatch_by_size.
inline uint64_t scalar_bits(const EValue& s, ScalarType t) {
  uint64_t bits = 0;
  if (s.tag == Tag::Int) {
    convert_elements(ScalarType::Long, &s.i, 1, t, &bits, 1, 1);
  } else if (s.tag == Tag::Bool) {
    convert_elements(ScalarType::Bool, &s.b, 1, t, &bits, 1, 1);
  } else {
    convert_elements(ScalarType::Double, &s.d, 1, t, &bits, 1, 1);
  }
  return bits;
}

}  // namespace pteron
