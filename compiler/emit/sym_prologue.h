// The instructions that compute a dynamic program's symbolic ints at run time, as ExecuTorch
// encodes them: each symbol is read from its input with aten::sym_size.int, each expression
// built from executorch_prim::{add,mul,floordiv,mod,sym_max,sym_min}.Scalar, results in Int
// values that the int lists of view_copy, expand_copy, ... refer to. They depend on the
// inputs only, so they run first, before the graph's instructions.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct SymSlot {
  enum class Kind { Const, Result } kind = Kind::Const;
  int64_t value = 0;  // Const: the value; Result: its upper bound (the value before the first run)
};

struct SymCall {
  std::string op;                     // "aten::sym_size" / "executorch_prim::add"
  std::string overload;               // "int" / "Scalar"
  ir::ValueId tensor = ir::kNoValue;  // sym_size: the input read
  std::vector<int> operands;          // slots (sym_size: the dimension's Const slot)
  int out = -1;                       // Result slot
};

class SymPrologue {
 public:
  // Every symbolic argument of the nodes `kernel_nodes` (those emitted as kernel calls).
  SymPrologue(const ir::Graph& graph, const std::vector<ir::NodeId>& kernel_nodes);

  const std::vector<SymSlot>& slots() const { return slots_; }
  const std::vector<SymCall>& calls() const { return calls_; }
  // The slot holding `e` (which must have been seen by the constructor).
  int slot(const ir::SymExpr& e) const;

 private:
  int add(const ir::SymExpr& e);
  int constant(int64_t v);

  const ir::Graph& graph_;
  std::vector<SymSlot> slots_;
  std::vector<SymCall> calls_;
  std::unordered_map<std::string, int> by_expr_;
};

}  // namespace pteron::compiler
