// Symbolic integers: the sizes a bounded dynamic export leaves symbolic ("s0", "2*s0 - 1",
// "s0 // 3"), as trees over the graph's symbols. The frontend parses torch's printed form
// (sympy's srepr: "Add(Mul(Integer(2), Symbol('s0', ...)), Integer(-1))"); the compiler only
// needs each expression's bounds (from the symbols' ranges) and, for arguments, code that
// computes it at run time (ExecuTorch's executorch_prim ops, emitted by the program emitter).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/ids.h"

namespace pteron::compiler::ir {

struct SymExpr;
using SymExprPtr = std::shared_ptr<const SymExpr>;

struct SymExpr {
  // Add, Mul, Max and Min take two or more operands; FloorDiv and Mod exactly two; Pow a base
  // and a constant exponent in [0, 8] (torch writes s0*s0 strides as Pow(s0, 2)).
  enum class Op : uint8_t { Const, Symbol, Add, Mul, FloorDiv, Mod, Max, Min, Pow };
  Op op = Op::Const;
  int64_t value = 0;   // Const
  std::string symbol;  // Symbol
  std::vector<SymExprPtr> operands;

  static SymExprPtr constant(int64_t v);
  static SymExprPtr sym(std::string name);
  bool is_constant() const { return op == Op::Const; }
  // Python-like text ("2*s0 + -1", "(s0 // 3)"), also the key that identifies the expression.
  std::string str() const;
};

// A symbol's range, from the export's range_constraints, and where its value is read at run
// time: dimension `dim` of graph input `input`, which is scale * symbol + offset (1 and 0 but
// for torch.export's derived dims, e.g. Dim("h") = 32 * Dim("_h") for a net that halves its
// input five times: the symbol is then (size - offset) // scale). A data-dependent symbol is
// read from the value that gives it: dimension `dim` of an op's output (nonzero's length), or
// with `from_value` the one element of integer tensor `input` (Tensor.item()).
struct SymbolInfo {
  int64_t min = 0;
  int64_t max = 0;
  ValueId input = kNoValue;
  int32_t dim = -1;
  int64_t scale = 1;
  int64_t offset = 0;
  bool from_value = false;
};
using SymbolTable = std::map<std::string, SymbolInfo>;

struct SymBounds {
  int64_t lo = 0;
  int64_t hi = 0;
};

// A size of the form scale * symbol + offset (scale >= 1): a whole symbol (1, 0) or one of
// torch.export's derived dims (Dim("h") = 32 * Dim("_h") + 1).
struct AffineSymbol {
  std::string symbol;
  int64_t scale = 1;
  int64_t offset = 0;
};
// nullopt for sizes of other forms (constants, products of symbols, divisions, ...).
std::optional<AffineSymbol> affine_symbol(const SymExpr& e);

// Parses torch's srepr text. Accepts Integer, Symbol, Add, Mul, FloorDiv, Mod, Max and Min;
// throws CompileError naming `what` and the unsupported part otherwise.
SymExprPtr parse_sym_expr(std::string_view text, const std::string& what);

// Whether every symbol of `e` is known and has a max (what sym_bounds needs).
bool is_bounded(const SymExpr& e, const SymbolTable& symbols);

// Interval bounds of `e` over the symbols' ranges; throws CompileError (naming `what`) for
// unknown symbols, overflow or a division whose divisor range includes zero or negatives.
SymBounds sym_bounds(const SymExpr& e, const SymbolTable& symbols, const std::string& what);

// `e` with every constant sub-expression folded (Mul(2, 3) -> 6); a constant when no symbol
// remains.
SymExprPtr fold_sym_expr(const SymExprPtr& e);

}  // namespace pteron::compiler::ir
