// Conversions between Python arrays (numpy, torch, anything with DLPack) and runtime tensors.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron::py {

// Owns tensor metadata for tensors that view Python-owned arrays.
struct TensorHolder {
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  Tensor tensor;
};

// Wraps a dense ndarray (any dim order) as a Tensor without copying. Throws on strided views.
// Read-only arrays are taken too: a caller that lets the runtime write into the tensor (an
// output, an input the model writes into) makes sure the array is writable.
void wrap_ndarray(const nanobind::ndarray<nanobind::ro>& array, TensorHolder& holder);

ScalarType dtype_from_dlpack(nanobind::dlpack::dtype dt);
nanobind::dlpack::dtype dlpack_from_dtype(ScalarType t);

}  // namespace pteron::py
