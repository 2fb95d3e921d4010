// Kernel arguments for the bare-metal kernel firmware: a tensor over caller-owned data with its
// sizes, dim order and strides stored alongside (and the EValue an argument list points at), and
// int and int-list EValues.
#pragma once

#include <initializer_list>

#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

struct TensorBox {
  int32_t sizes[4];
  uint8_t order[4] = {0, 1, 2, 3};
  int32_t strides[4];
  pteron::Tensor t;
  pteron::EValue v;
  TensorBox(pteron::ScalarType dtype, int32_t rank, const int32_t* s, void* data) {
    for (int32_t d = 0; d < rank; ++d) sizes[d] = s[d];
    t = pteron::Tensor(dtype, rank, sizes, order, strides, data);
    v = pteron::EValue::from_tensor(&t);
  }
  TensorBox(pteron::ScalarType dtype, std::initializer_list<int32_t> s, void* data)
      : TensorBox(dtype, static_cast<int32_t>(s.size()), s.begin(), data) {}
};

inline pteron::EValue I(int64_t v) { return pteron::EValue::from_int(v); }

inline pteron::EValue L(const int64_t* p, size_t n) {
  pteron::EValue e;
  e.tag = pteron::Tag::IntList;
  e.int_list = pteron::Span<const int64_t>(p, n);
  return e;
}
