// Tensor: a view over memory the runtime does not own. Sizes, dim order and strides live in
// arrays the method allocator handed out at load time; data points into a planned arena, the
// program's constant segment, or a caller's input buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"

namespace pteron {

enum class ShapeDynamism : uint8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };

constexpr int kMaxTensorDim = 16;

class Tensor {
 public:
  Tensor() = default;
  // `sizes`, `dim_order` and `strides` must each hold `dim` (<= kMaxTensorDim) entries and
  // outlive the tensor.
  Tensor(ScalarType dtype, int32_t dim, int32_t* sizes, uint8_t* dim_order, int32_t* strides,
         void* data, ShapeDynamism dynamism = ShapeDynamism::Static);

  ScalarType dtype() const { return dtype_; }
  int32_t dim() const { return dim_; }
  int32_t size(int32_t d) const { return sizes_[d]; }
  int32_t stride(int32_t d) const { return strides_[d]; }
  Span<const int32_t> sizes() const { return {sizes_, static_cast<size_t>(dim_)}; }
  Span<const int32_t> strides() const { return {strides_, static_cast<size_t>(dim_)}; }
  Span<const uint8_t> dim_order() const { return {dim_order_, static_cast<size_t>(dim_)}; }
  ShapeDynamism dynamism() const { return dynamism_; }

  int64_t numel() const { return numel_; }
  size_t element_size() const { return pteron::element_size(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(); }
  // Bytes reserved for the data: the bound for dynamic tensors, nbytes() otherwise.
  size_t capacity_bytes() const { return capacity_bytes_; }

  // True when dim_order is 0..dim-1 (row-major, the layout kernels assume by default).
  bool is_contiguous() const;
  // True when dim_order is channels-last for a 4-D tensor (0, 2, 3, 1).
  bool is_channels_last() const;

  void* mutable_data() const { return data_; }
  const void* const_data() const { return data_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_);
  }
  void set_data(void* data) { data_ = data; }

  // Changes the shape. Static tensors accept only their own shape; bounded-dynamic tensors
  // accept any shape of the same rank that fits in their capacity.
  Error resize(Span<const int32_t> new_sizes);

 private:
  void recompute_strides();

  // Program tensors have fewer than 2^31 elements and at most kMaxTensorDim dims (the verifier
  // checks); on a device the count is stored in 32 bits and the rank in 8, so a loaded method's
  // tensors take 28 bytes each instead of 40.
#ifdef PTERON_BARE_METAL
  using Count = int32_t;
  using Rank = uint8_t;
#else
  using Count = int64_t;
  using Rank = int32_t;
#endif
  int32_t* sizes_ = nullptr;
  uint8_t* dim_order_ = nullptr;
  int32_t* strides_ = nullptr;
  void* data_ = nullptr;
  Count numel_ = 1;
  size_t capacity_bytes_ = 0;
  Rank dim_ = 0;
  ScalarType dtype_ = ScalarType::Float;
  ShapeDynamism dynamism_ = ShapeDynamism::Static;
};

// Checks that dim_order is a permutation of 0..dim-1.
bool is_valid_dim_order(Span<const uint8_t> dim_order);

// Number of elements for `sizes`, or -1 if a size is negative or the product exceeds
// `max_elements`, counting a 0 size as 1: the outermost stride (recompute_strides skips zero
// dims) must fit too, so [0, 2^24, 2^24] is refused although it holds no element.
int64_t checked_numel(Span<const int32_t> sizes, int64_t max_elements);

}  // namespace pteron
