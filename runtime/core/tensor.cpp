#include "runtime/core/tensor.h"

namespace pteron {

Tensor::Tensor(ScalarType dtype, int32_t dim, int32_t* sizes, uint8_t* dim_order, int32_t* strides,
               void* data, ShapeDynamism dynamism)
    : sizes_(sizes),
      dim_order_(dim_order),
      strides_(strides),
      data_(data),
      dim_(static_cast<Rank>(dim)),
      dtype_(dtype),
      dynamism_(dynamism) {
  recompute_strides();
  capacity_bytes_ = nbytes();
}

void Tensor::recompute_strides() {
  int64_t numel = 1;
  for (int32_t d = 0; d < dim_; ++d) numel *= sizes_[d];
  numel_ = static_cast<Count>(numel);
  // Walk dims from innermost (last in dim_order) outwards.
  // Strides are int32 (the format's sizes are); the verifier and resize() refuse sizes whose
  // product, zero dims counted as 1, does not fit (checked_numel), so neither does `running`.
  int64_t running = 1;
  for (int32_t i = dim_ - 1; i >= 0; --i) {
    const uint8_t d = dim_order_[i];
    strides_[d] = static_cast<int32_t>(running);
    running *= sizes_[d] > 0 ? sizes_[d] : 1;
  }
}

bool Tensor::is_contiguous() const {
  for (int32_t i = 0; i < dim_; ++i) {
    if (dim_order_[i] != i) return false;
  }
  return true;
}

bool Tensor::is_channels_last() const {
  return dim_ == 4 && dim_order_[0] == 0 && dim_order_[1] == 2 && dim_order_[2] == 3 &&
         dim_order_[3] == 1;
}

Error Tensor::resize(Span<const int32_t> new_sizes) {
  if (static_cast<int32_t>(new_sizes.size()) != dim_) {
    return fail(Error::InvalidArgument, "cannot resize a %d-d tensor to rank %d", dim_,
                static_cast<int>(new_sizes.size()));
  }
  bool same = true;
  for (int32_t d = 0; d < dim_; ++d) same = same && new_sizes[d] == sizes_[d];
  if (same) return Error::Ok;
  if (dynamism_ == ShapeDynamism::Static) {
    int32_t d = 0;
    while (new_sizes[d] == sizes_[d]) ++d;
    return fail(Error::InvalidArgument, "static tensor cannot change shape (dim %d: %d -> %d)", d,
                sizes_[d], new_sizes[d]);
  }
  const int64_t n = checked_numel(new_sizes, INT32_MAX);
  if (n < 0) return fail(Error::OutOfRange, "a result of more than 2^31 elements");
  if (static_cast<size_t>(n) * element_size() > capacity_bytes_) {
    // A data-dependent result (nonzero, unique, an item() size) past its planned upper bound.
    return fail(Error::OutOfRange,
                "a result of %lld elements exceeds the %zu the program was planned for (the "
                "operator's bound, or a torch._check in the model)",
                static_cast<long long>(n), capacity_bytes_ / element_size());
  }
  for (int32_t d = 0; d < dim_; ++d) sizes_[d] = new_sizes[d];
  recompute_strides();
  return Error::Ok;
}

bool is_valid_dim_order(Span<const uint8_t> dim_order) {
  uint32_t seen = 0;
  for (size_t i = 0; i < dim_order.size(); ++i) {
    const uint8_t d = dim_order[i];
    if (d >= dim_order.size() || d >= 32 || (seen & (1u << d))) return false;
    seen |= 1u << d;
  }
  return true;
}

int64_t checked_numel(Span<const int32_t> sizes, int64_t max_elements) {
  int64_t n = 1, span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) return -1;
    if (sizes[i] != 0 && span > max_elements / sizes[i]) return -1;
    span *= sizes[i] != 0 ? sizes[i] : 1;
    n *= sizes[i];
  }
  return n;
}

}  // namespace pteron
