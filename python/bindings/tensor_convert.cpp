#include "python/bindings/tensor_convert.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace nb = nanobind;

namespace pteron::py {

ScalarType dtype_from_dlpack(nb::dlpack::dtype dt) {
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(dt.code);
  if (dt.lanes != 1) throw std::invalid_argument("vector dtypes are not supported");
  if (code == C::Float && dt.bits == 32) return ScalarType::Float;
  if (code == C::Float && dt.bits == 64) return ScalarType::Double;
  if (code == C::Float && dt.bits == 16) return ScalarType::Half;
  if (code == C::Bfloat && dt.bits == 16) return ScalarType::BFloat16;
  if (code == C::Int && dt.bits == 8) return ScalarType::Char;
  if (code == C::Int && dt.bits == 16) return ScalarType::Short;
  if (code == C::Int && dt.bits == 32) return ScalarType::Int;
  if (code == C::Int && dt.bits == 64) return ScalarType::Long;
  if (code == C::UInt && dt.bits == 8) return ScalarType::Byte;
  if (code == C::UInt && dt.bits == 16) return ScalarType::UInt16;
  if (code == C::Bool) return ScalarType::Bool;
  if (code == C::Complex && dt.bits == 32) return ScalarType::ComplexHalf;
  if (code == C::Complex && dt.bits == 64) return ScalarType::ComplexFloat;
  if (code == C::Complex && dt.bits == 128) return ScalarType::ComplexDouble;
  throw std::invalid_argument("unsupported array dtype");
}

nb::dlpack::dtype dlpack_from_dtype(ScalarType t) {
  using C = nb::dlpack::dtype_code;
  auto make = [](C code, uint8_t bits) {
    nb::dlpack::dtype d;
    d.code = static_cast<uint8_t>(code);
    d.bits = bits;
    d.lanes = 1;
    return d;
  };
  switch (t) {
    case ScalarType::Float:
      return make(C::Float, 32);
    case ScalarType::Double:
      return make(C::Float, 64);
    case ScalarType::Half:
      return make(C::Float, 16);
    case ScalarType::BFloat16:
      return make(C::Bfloat, 16);
    case ScalarType::Char:
      return make(C::Int, 8);
    case ScalarType::Short:
      return make(C::Int, 16);
    case ScalarType::Int:
      return make(C::Int, 32);
    case ScalarType::Long:
      return make(C::Int, 64);
    case ScalarType::Byte:
      return make(C::UInt, 8);
    case ScalarType::UInt16:
      return make(C::UInt, 16);
    case ScalarType::Bool:
      return make(C::Bool, 8);
    case ScalarType::ComplexHalf:
      return make(C::Complex, 32);
    case ScalarType::ComplexFloat:
      return make(C::Complex, 64);
    case ScalarType::ComplexDouble:
      return make(C::Complex, 128);
    default:
      throw std::invalid_argument(std::string("no array dtype for ") + scalar_type_name(t));
  }
}

void wrap_ndarray(const nb::ndarray<nb::ro>& array, TensorHolder& h) {
  const int32_t dim = static_cast<int32_t>(array.ndim());
  if (dim > kMaxTensorDim) throw std::invalid_argument("array rank above 16");
  if (array.device_type() != nb::device::cpu::value)
    throw std::invalid_argument("array is not on the CPU");
  h.sizes.resize(dim);
  h.dim_order.resize(dim);
  h.strides.resize(dim);
  std::vector<int64_t> strides(dim);
  for (int32_t d = 0; d < dim; ++d) {
    h.sizes[d] = static_cast<int32_t>(array.shape(d));
    strides[d] = array.stride(d);
  }
  // Dim order: dims by decreasing stride, ties in logical order.
  std::iota(h.dim_order.begin(), h.dim_order.end(), 0);
  std::stable_sort(h.dim_order.begin(), h.dim_order.end(),
                   [&](uint8_t a, uint8_t b) { return strides[a] > strides[b]; });
  h.tensor = Tensor(dtype_from_dlpack(array.dtype()), dim, h.sizes.data(), h.dim_order.data(),
                    h.strides.data(), const_cast<void*>(array.data()));
  // An empty array has no element to misplace: numpy and torch give its dims arbitrary strides.
  const bool empty = std::any_of(h.sizes.begin(), h.sizes.end(), [](int32_t s) { return s == 0; });
  for (int32_t d = 0; d < dim && !empty; ++d) {
    if (h.sizes[d] > 1 && h.strides[d] != strides[d]) {
      throw std::invalid_argument("array is not dense (sliced or broadcast view); pass a copy");
    }
  }
}

}  // namespace pteron::py
