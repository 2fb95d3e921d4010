#include "compiler/frontend/unbacked_sizes.h"

#include <algorithm>

#include "compiler/ir/op_names.h"

namespace pteron::compiler::frontend {

std::optional<int64_t> data_dependent_bound(const std::string& op,
                                            const std::vector<const ir::TensorSpec*>& inputs) {
  // nonzero: at most one row per element; argwhere decomposes to it.
  if (op == ops::aten::nonzero && !inputs.empty()) return inputs[0]->numel();
  // masked_select: at most the broadcast of self and mask.
  if (op == ops::aten::masked_select && inputs.size() == 2) {
    const ir::TensorSpec& a = *inputs[0];
    const ir::TensorSpec& b = *inputs[1];
    const size_t rank = std::max(a.rank(), b.rank());
    int64_t n = 1;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t da = i < rank - a.rank() ? 1 : a.sizes[i - (rank - a.rank())];
      const int64_t db = i < rank - b.rank() ? 1 : b.sizes[i - (rank - b.rank())];
      n *= std::max(da, db);
    }
    return n;
  }
  return std::nullopt;
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
