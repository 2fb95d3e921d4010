// What the compiler knows about a tensor value: element type, static shape, memory layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/sym_expr.h"

namespace pteron::compiler::ir {

// Layout is a dim order (ExecuTorch's representation): dim_order[0] is the outermost dimension
// in memory, dim_order[rank-1] the innermost. Identity = contiguous; {0, 2, 3, 1} = channels
// last. Strides are always derived from it, so every TensorSpec describes a dense tensor.
struct TensorSpec {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  // Bounded dynamic shapes: empty for a static tensor; otherwise each dimension's lower bound,
  // and `sizes` holds the upper bounds (what memory is planned for).
  std::vector<int64_t> min_sizes;
  // ... and each dimension's symbolic size as the frontend read it (s0, 2*s0; null for a
  // static dimension), from which the emitter computes the size at run time (a view's
  // executorch_prim::et_view). Two dynamic specs are equal only with the same symbolic sizes
  // (compared as text), so a pass comparing specs (no-op removal) stays exact. Empty for
  // tensors passes make.
  std::vector<SymExprPtr> sym_sizes;

  // A contiguous (identity dim order) spec.
  static TensorSpec contiguous(ScalarType dtype, std::vector<int64_t> sizes);

  size_t rank() const { return sizes.size(); }
  bool is_dynamic() const { return !min_sizes.empty(); }
  int64_t numel() const;
  // numel * element size; 0 for an unknown dtype.
  size_t nbytes() const;
  // Strides in elements implied by dim_order.
  std::vector<int64_t> strides() const;
  bool is_contiguous() const;

  // dimension d's symbolic size, or null (static, or not recorded).
  const SymExpr* sym_size(size_t d) const {
    return d < sym_sizes.size() ? sym_sizes[d].get() : nullptr;
  }
  // True when every dimension's size is known: a literal, or a recorded symbolic size.
  bool has_sym_sizes() const { return !is_dynamic() || sym_sizes.size() == rank(); }

  bool operator==(const TensorSpec& o) const;
};

std::vector<uint8_t> identity_dim_order(size_t rank);

// The dim order of a strided tensor, with torch's tie-breaking (Tensor.dim_order()): contiguous
// wins, then channels-last, then a stable sort by decreasing stride.
std::vector<uint8_t> dim_order_from_strides(std::span<const int64_t> sizes,
                                            std::span<const int64_t> strides);

// Strides (in elements) a dense tensor of `sizes` laid out in `dim_order` has.
std::vector<int64_t> strides_from_dim_order(std::span<const int64_t> sizes,
                                            std::span<const uint8_t> dim_order);

// True when `strides` address every element exactly once in `dim_order`'s layout (size-1 dims
// may have any stride). Such a tensor can be used in place.
bool is_dense_in_dim_order(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                           std::span<const uint8_t> dim_order);

// "f32[2, 4]", with the dim order appended when it is not the identity ("f32[1, 8, 4, 4]
// dim_order=[0, 2, 3, 1]").
std::string to_string(const TensorSpec& spec);

}  // namespace pteron::compiler::ir
