#include "compiler/frontend/unbacked_sizes.h"

#include <algorithm>

#include "compiler/ir/op_names.h"

namespace pteron::compiler::frontend {

namespace {

int64_t broadcast_numel(const ir::TensorSpec& a, const ir::TensorSpec& b) {
  const size_t rank = std::max(a.rank(), b.rank());
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a.sizes[i - (rank - a.rank())];
    const int64_t db = i < rank - b.rank() ? 1 : b.sizes[i - (rank - b.rank())];
    n *= std::max(da, db);
  }
  return n;
}

// The size of `spec` at the dim argument `dim` (negative from the end); nullopt when out of range.
std::optional<int64_t> size_at(const ir::TensorSpec& spec, const ir::Argument& dim) {
  if (!dim.is<int64_t>()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(spec.rank());
  const int64_t d = dim.to_int() < 0 ? dim.to_int() + rank : dim.to_int();
  if (d < 0 || d >= rank) return std::nullopt;
  return spec.sizes[static_cast<size_t>(d)];
}

// How many values an integer dtype holds from 0 up: bincount's length never exceeds it.
std::optional<int64_t> non_negative_values(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return 256;
    case ScalarType::Char:
      return 128;
    case ScalarType::Short:
      return 32768;
    default:
      return std::nullopt;
  }
}

}  // namespace

DataDependentRange data_dependent_range(const std::string& op,
                                        const std::vector<ir::Argument>& args,
                                        const ir::Graph& graph) {
  std::vector<const ir::TensorSpec*> tensors;
  for (const ir::Argument& a : args) {
    if (a.is_tensor()) tensors.push_back(&graph.value(a.tensor()).spec);
  }
  if (tensors.empty()) return {};
  const ir::TensorSpec& self = *tensors[0];
  // nonzero: at most one row per element; argwhere decomposes to it. Flat unique and
  // unique_consecutive: at most one group per element.
  if (op == ops::aten::nonzero || op == ops::aten::_unique2 ||
      (op == ops::aten::unique_consecutive && args.size() > 3 && args[3].is_none())) {
    return {0, self.numel()};
  }
  // Their dim= forms: at most one group per slice along dim.
  if (op == ops::aten::unique_dim && args.size() > 1) return {0, size_at(self, args[1])};
  if (op == ops::aten::unique_consecutive && args.size() > 3) return {0, size_at(self, args[3])};
  // A slice by a value with no bound (x[k:] for k = n.item()): the kernel clamps to the dim.
  if ((op == ops::aten::slice_Tensor || op == ops::aten::slice_copy_Tensor) && args.size() > 1)
    return {0, size_at(self, args[1])};
  // masked_select: at most the broadcast of self and mask.
  if (op == ops::aten::masked_select && tensors.size() == 2) {
    return {0, broadcast_numel(self, *tensors[1]), self.numel()};
  }
  // bincount: at least minlength; at most the values self's dtype holds (or minlength).
  if (op == ops::aten::bincount) {
    const ir::Argument& minlength = args.back();
    const int64_t min = minlength.is<int64_t>() ? std::max<int64_t>(minlength.to_int(), 0) : 0;
    const std::optional<int64_t> values = non_negative_values(self.dtype);
    if (!values) return {min, std::nullopt};
    return {min, std::max(min, *values)};
  }
  return {};
}

bool always_holds(const std::string& cmp, const ir::SymExpr& a, const ir::SymExpr& b,
                  const ir::SymbolTable& symbols, const std::string& what) {
  const ir::SymBounds x = ir::sym_bounds(a, symbols, what);
  const ir::SymBounds y = ir::sym_bounds(b, symbols, what);
  if (cmp == "ge") return x.lo >= y.hi;
  if (cmp == "gt") return x.lo > y.hi;
  if (cmp == "le") return x.hi <= y.lo;
  if (cmp == "lt") return x.hi < y.lo;
  if (cmp == "eq") return x.lo == x.hi && y.lo == y.hi && x.lo == y.lo;
  if (cmp == "ne") return x.hi < y.lo || y.hi < x.lo;
  return false;
}

}  // namespace pteron::compiler::frontend
