// Data-dependent sizes (torch's unbacked SymInts, "u0"): an output whose length depends on the
// values of an input (nonzero, masked_select). Export names the length with a symbol of its
// own, bounds it in range_constraints (or not), and guards it with _assert_scalar nodes over
// comparisons. pteron plans such an output at its upper bound as a DYNAMIC_BOUND tensor that
// the kernel resizes, reads the symbol at run time from the output's dimension, drops the
// guards the bound already implies and checks the others at run time (pteron::check_size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/argument.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ir/tensor_spec.h"

namespace pteron::compiler::frontend {

// What an operator itself guarantees about a data-dependent output length: at least `min`,
// and at most `max` when it sets one.
struct DataDependentRange {
  int64_t min = 0;
  std::optional<int64_t> max;
  // The max torch's own meta function gives where it is below `max` and wrong (masked_select:
  // self's numel, though a broadcast mask selects from more): a range_constraints max equal to
  // it is torch's, not a torch._check in the model.
  std::optional<int64_t> unsound_torch_max;
};

// The range of the data-dependent output length of `op` ("aten::nonzero.default") called with
// `args` (tensor specs at their planned upper bounds): max nullopt where pteron knows no bound
// for the op (bincount of int32 / int64 values) or for no op it knows.
DataDependentRange data_dependent_range(const std::string& op,
                                        const std::vector<ir::Argument>& args,
                                        const ir::Graph& graph);

// Whether `a <cmp> b` ("ge", "le", "gt", "lt", "eq", "ne": Python's operator names) holds for
// every value of the symbols in their ranges: true when it always holds, false otherwise
// (including "cannot tell").
bool always_holds(const std::string& cmp, const ir::SymExpr& a, const ir::SymExpr& b,
                  const ir::SymbolTable& symbols, const std::string& what);

}  // namespace pteron::compiler::frontend
