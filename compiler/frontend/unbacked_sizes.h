// Data-dependent sizes (torch's unbacked SymInts, "u0"): an output whose length depends on the
// values of an input (nonzero, masked_select). Export names the length with a symbol of its
// own, bounds it in range_constraints (or not), and guards it with _assert_scalar nodes over
// comparisons. pteron plans such an output at its upper bound as a DYNAMIC_BOUND tensor that
// the kernel resizes, reads the symbol at run time from the output's dimension, and drops the
// guards the bound already implies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/sym_expr.h"
#include "compiler/ir/tensor_spec.h"

namespace pteron::compiler::frontend {

// The upper bound of a data-dependent output length of `op` ("aten::nonzero.default") from its
// tensor inputs' specs (planned upper bounds), or nullopt when pteron knows no bound for the op.
std::optional<int64_t> data_dependent_bound(const std::string& op,
                                            const std::vector<const ir::TensorSpec*>& inputs);

// Whether `a <cmp> b` ("ge", "le", "gt", "lt", "eq", "ne": Python's operator names) holds for
// every value of the symbols in their ranges: true when it always holds, false otherwise
// (including "cannot tell").
bool always_holds(const std::string& cmp, const ir::SymExpr& a, const ir::SymExpr& b,
                  const ir::SymbolTable& symbols, const std::string& what);

}  // namespace pteron::compiler::frontend
