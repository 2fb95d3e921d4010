// A tensor of a TOSA graph as the executor sees it: dtype, shape and a pointer into either the
// flatbuffer (constants), the planned arena (intermediates) or the caller's buffers (graph
// inputs and outputs). TOSA tensors are dense and row-major (NHWC for images).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/tosa/schema/tosa_generated.h"

namespace pteron::tosa_rt {

constexpr int kMaxRank = 6;

struct TosaTensor {
  const char* name = "";
  tosa::DType dtype = tosa::DType::UNKNOWN;
  int32_t rank = 0;
  int32_t shape[kMaxRank] = {};
  int64_t numel = 1;
  uint8_t* data = nullptr;
  bool is_shape = false;    // a TosaShape (int64 values), not a TosaTensor
  bool is_const = false;    // data lives in the flatbuffer
  bool is_input = false;    // bound to the caller's input buffer at execute()
  bool is_output = false;   // bound to the caller's output buffer at execute()
  int32_t producer = -1;    // op index that writes it (-1: const or input)
  int32_t last_use = -1;    // last op index that reads it
  size_t arena_offset = 0;  // intermediates only

  int64_t dim(int i) const { return shape[i]; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

// Bytes per element in memory (INT48 is stored in 6 bytes, SHAPE values as int64);
// 0 for dtypes the executor does not handle.
inline size_t dtype_size(tosa::DType t) {
  switch (t) {
    case tosa::DType::BOOL:
    case tosa::DType::INT8:
      return 1;
    case tosa::DType::INT16:
    case tosa::DType::FP16:
    case tosa::DType::BF16:
      return 2;
    case tosa::DType::INT32:
    case tosa::DType::FP32:
      return 4;
    case tosa::DType::INT48:
      return 6;
    case tosa::DType::INT64:
    case tosa::DType::SHAPE:
      return 8;
    default:
      return 0;
  }
}

inline size_t tensor_bytes(const TosaTensor& t) { return size_t(t.numel) * dtype_size(t.dtype); }

// Reads one integer element of any integer dtype, sign-extended (INT48 included).
inline int64_t load_int(const TosaTensor& t, int64_t i) {
  switch (t.dtype) {
    case tosa::DType::BOOL:
    case tosa::DType::INT8:
      return reinterpret_cast<const int8_t*>(t.data)[i];
    case tosa::DType::INT16:
      return reinterpret_cast<const int16_t*>(t.data)[i];
    case tosa::DType::INT32:
      return reinterpret_cast<const int32_t*>(t.data)[i];
    case tosa::DType::INT48: {
      const uint8_t* p = t.data + 6 * i;
      uint64_t v = 0;
      for (int b = 5; b >= 0; --b) v = (v << 8) | p[b];
      return int64_t(v << 16) >> 16;
    }
    case tosa::DType::INT64:
    case tosa::DType::SHAPE: {
      int64_t v;
      __builtin_memcpy(&v, t.data + 8 * i, 8);
      return v;
    }
    default:
      return 0;
  }
}

inline void store_int(const TosaTensor& t, int64_t i, int64_t v) {
  switch (t.dtype) {
    case tosa::DType::BOOL:
    case tosa::DType::INT8:
      reinterpret_cast<int8_t*>(t.data)[i] = int8_t(v);
      break;
    case tosa::DType::INT16:
      reinterpret_cast<int16_t*>(t.data)[i] = int16_t(v);
      break;
    case tosa::DType::INT32:
      reinterpret_cast<int32_t*>(t.data)[i] = int32_t(v);
      break;
    case tosa::DType::INT48: {
      uint8_t* p = t.data + 6 * i;
      for (int b = 0; b < 6; ++b) p[b] = uint8_t(uint64_t(v) >> (8 * b));
      break;
    }
    case tosa::DType::INT64:
    case tosa::DType::SHAPE:
      __builtin_memcpy(t.data + 8 * i, &v, 8);
      break;
    default:
      break;
  }
}

inline bool is_int_dtype(tosa::DType t) {
  return t == tosa::DType::INT8 || t == tosa::DType::INT16 || t == tosa::DType::INT32 ||
         t == tosa::DType::INT48 || t == tosa::DType::BOOL;
}

}  // namespace pteron::tosa_rt
