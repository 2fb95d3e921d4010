#include "compiler/ir/tensor_spec.h"

#include <numeric>

#include "compiler/ir/queries.h"

namespace pteron::compiler::ir {

TensorSpec TensorSpec::contiguous(ScalarType dtype, std::vector<int64_t> sizes) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.dim_order = identity_dim_order(sizes.size());
  spec.sizes = std::move(sizes);
  return spec;
}

int64_t TensorSpec::numel() const { return ir::numel(sizes); }

size_t TensorSpec::nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }

std::vector<int64_t> TensorSpec::strides() const {
  return strides_from_dim_order(sizes, dim_order);
}

bool TensorSpec::operator==(const TensorSpec& o) const {
  if (dtype != o.dtype || sizes != o.sizes || dim_order != o.dim_order ||
      min_sizes != o.min_sizes || sym_sizes.size() != o.sym_sizes.size()) {
    return false;
  }
  for (size_t d = 0; d < sym_sizes.size(); ++d) {
    const SymExpr* a = sym_sizes[d].get();
    const SymExpr* b = o.sym_sizes[d].get();
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && a->str() != b->str())) return false;
  }
  return true;
}

bool TensorSpec::is_contiguous() const { return dim_order == identity_dim_order(rank()); }

std::vector<uint8_t> identity_dim_order(size_t rank) {
  std::vector<uint8_t> order(rank);
  std::iota(order.begin(), order.end(), uint8_t{0});
  return order;
}

std::vector<int64_t> strides_from_dim_order(std::span<const int64_t> sizes,
                                            std::span<const uint8_t> dim_order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t i = dim_order.size(); i-- > 0;) {
    strides[dim_order[i]] = stride;
    stride *= std::max<int64_t>(sizes[dim_order[i]], 1);
  }
  return strides;
}

bool is_dense_in_dim_order(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                           std::span<const uint8_t> dim_order) {
  int64_t expected = 1;
  for (size_t i = dim_order.size(); i-- > 0;) {
    const size_t d = dim_order[i];
    if (sizes[d] == 1) continue;
    if (sizes[d] == 0) return true;  // empty: nothing to address
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

namespace {

std::vector<uint8_t> channels_last_order(size_t rank) {
  std::vector<uint8_t> order{0};
  for (size_t d = 2; d < rank; ++d) order.push_back(static_cast<uint8_t>(d));
  order.push_back(1);
  return order;
}

// torch._prims_common.compute_elementwise_output_logical_to_physical_perm's comparison for
// one tensor: >0 when dim a should be inner to dim b.
int should_swap(std::span<const int64_t> sizes, std::span<const int64_t> strides, size_t a,
                size_t b) {
  const int64_t sa = strides[a], sb = strides[b];
  if (sa == 0 || sb == 0) return 0;
  if (sa == sb) return sizes[b] >= sizes[a] ? 0 : 1;
  return sb > sa ? -1 : 1;
}

}  // namespace

std::vector<uint8_t> dim_order_from_strides(std::span<const int64_t> sizes,
                                            std::span<const int64_t> strides) {
  const size_t rank = sizes.size();
  std::vector<uint8_t> identity = identity_dim_order(rank);
  if (rank <= 1) return identity;
  const bool contiguous = is_dense_in_dim_order(sizes, strides, identity);
  const bool channels_last =
      (rank == 4 || rank == 5) && is_dense_in_dim_order(sizes, strides, channels_last_order(rank));
  if (contiguous && !channels_last) return identity;
  if (channels_last && !contiguous) return channels_last_order(rank);
  // Insertion sort from innermost to outermost, as torch does; reversed at the end.
  std::vector<size_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  for (size_t i = 1; i < rank; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      const int cmp = should_swap(sizes, strides, perm[dim0], perm[dim1]);
      if (cmp > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  std::vector<uint8_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = static_cast<uint8_t>(perm[rank - 1 - i]);
  return order;
}

std::string to_string(const TensorSpec& spec) {
  std::string s = dtype_name(spec.dtype) + "[";
  for (size_t i = 0; i < spec.sizes.size(); ++i) {
    if (i) s += ", ";
    // A dynamic dimension prints as its range ("2..64").
    if (spec.is_dynamic() && i < spec.min_sizes.size() && spec.min_sizes[i] != spec.sizes[i])
      s += std::to_string(spec.min_sizes[i]) + "..";
    s += std::to_string(spec.sizes[i]);
  }
  s += "]";
  if (!spec.is_contiguous()) {
    s += " dim_order=[";
    for (size_t i = 0; i < spec.dim_order.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(spec.dim_order[i]);
    }
    s += "]";
  }
  return s;
}

}  // namespace pteron::compiler::ir
