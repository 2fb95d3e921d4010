// Copies between arbitrary strided layouts. permute, expand, clone, slice, pad, repeat, cat and
// dim-order conversions all reduce to "walk these sizes with these source and destination
// strides": the walk follows the destination's memory order, adjacent dims that are contiguous
// on both sides are merged, and the innermost run becomes a memcpy when both sides are dense.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace pteron {

// Copies may describe up to two loop dims per tensor dim (repeat splits each dim in two).
constexpr int32_t kMaxCopyDim = 2 * kMaxTensorDim;

// Copies the block of shape `sizes` (rank `dim` <= kMaxCopyDim) from `src` to `dst`. Strides
// are in elements of `elem_size` bytes; source strides may be 0 (broadcast) and both sides may
// use any permutation of dims. Destination elements must not overlap each other.
void strided_copy(void* dst, const int64_t* dst_strides, const void* src,
                  const int64_t* src_strides, const int64_t* sizes, int32_t dim, size_t elem_size);

// Same, converting each element from `src_type` to `dst_type` as torch's `.to()` does.
// Returns false (copying nothing) when either dtype is not supported.
bool strided_copy_convert(void* dst, ScalarType dst_type, const int64_t* dst_strides,
                          const void* src, ScalarType src_type, const int64_t* src_strides,
                          const int64_t* sizes, int32_t dim);

// Element strides and sizes of `t` widened to int64 (the form the copy helpers take).
void tensor_strides(const Tensor& t, int64_t* strides);
void tensor_sizes(const Tensor& t, int64_t* sizes);

// Copies `src` into `dst` of the same shape (resizing a dynamic `dst`), whatever the two dim
// orders, converting the dtype when they differ. Fails, naming `op`, on a shape mismatch or an
// unsupported dtype.
Error copy_tensor(const char* op, const Tensor& src, Tensor& dst);

// out = self into out's own dim order, out having self's dtype: the body of the copy ops
// (alias_copy, detach_copy, lift_fresh_copy, clone) once their arguments are checked.
Error copy_same_dtype(const char* op, const Tensor& self, Tensor& out);

// Copies `src` into `dst` element by element in row-major logical order (reshape semantics):
// shapes may differ, numel and dtype must match (the caller checks). Any dim orders.
void copy_logical_order(const Tensor& src, Tensor& dst);

// Copies the view of `src` that starts at element `src_offset` and steps by `src_strides` (one
// per dim of `dst`) into all of `dst`. Permute, expand, slice, select and split are such views.
// Same dtype (the caller checks).
void copy_view(const Tensor& src, int64_t src_offset, const int64_t* src_strides, Tensor& dst);

// Copies all of `src` into the view of `dst` at element `dst_offset` with `dst_strides` (one per
// dim of `src`), converting the dtype when they differ (cat, stack). Returns false when a dtype
// is not supported.
bool copy_into_view(const Tensor& src, Tensor& dst, int64_t dst_offset, const int64_t* dst_strides);

// Fails, naming `op`, unless `t` has dtype `want` (`what` names the argument).
Error expect_dtype(const char* op, const Tensor& t, ScalarType want, const char* what);

// Unsigned words of each element size, allowed to alias the real element type: kernels that only
// move elements (gather, index, embedding) dispatch on the size, not on the dtype.
// (Structs, because an attribute on a typedef is dropped when it becomes a template argument.)
struct __attribute__((may_alias)) Word1 {
  uint8_t bits;
};
struct __attribute__((may_alias)) Word2 {
  uint16_t bits;
};
struct __attribute__((may_alias)) Word4 {
  uint32_t bits;
};
struct __attribute__((may_alias)) Word8 {
  uint64_t bits;
};
struct __attribute__((may_alias)) Word16 {  // complex128
  uint64_t bits[2];
};

// Calls fn(TypeTag<WordN>{}) for the word type of `elem_size` bytes; false for other sizes.
template <typename Fn>
bool dispatch_word(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1:
      fn(TypeTag<Word1>{});
      return true;
    case 2:
      fn(TypeTag<Word2>{});
      return true;
    case 4:
      fn(TypeTag<Word4>{});
      return true;
    case 8:
      fn(TypeTag<Word8>{});
      return true;
    case 16:
      fn(TypeTag<Word16>{});
      return true;
    default:
      return false;
  }
}

// Byte pointer to element `offset` of `t`.
inline char* byte_ptr(const Tensor& t, int64_t offset) {
  return static_cast<char*>(t.mutable_data()) + offset * static_cast<int64_t>(t.element_size());
}

}  // namespace pteron
