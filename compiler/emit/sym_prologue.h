// The instructions that compute a dynamic program's symbolic ints at run time, as ExecuTorch
// encodes them: each symbol is read from its input with aten::sym_size.int (or, for a size
// from Tensor.item(), aten::_local_scalar_dense of the tensor), each expression
// built from executorch_prim::{add,mul,floordiv,mod,sym_max,sym_min}.Scalar, results in Int
// values that the int lists of view_copy, expand_copy, ... refer to. Those depending on the
// inputs only run first, before the graph's instructions; a data-dependent size (nonzero's
// length) is read from its output right after the instruction producing it (SymSchedule).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
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
  bool may_be_negative(const ir::SymExpr& e) const;

  const ir::Graph& graph_;
  std::vector<SymSlot> slots_;
  std::vector<SymCall> calls_;
  std::unordered_map<std::string, int> by_expr_;
  bool unbounded_ok_ = false;  // adding an argument no memory is planned at (sym_arg_needs_bound)
};

// When each of a prologue's calls can run: once the tensor it reads has been produced (graph
// inputs, constants and state from the start) and its operands computed.
class SymSchedule {
 public:
  // `view_sources`: static memory views' outputs and their sources (no instruction produces
  // them: their bytes exist once the source's do).
  SymSchedule(const ir::Graph& graph, const SymPrologue& prologue,
              const std::unordered_map<ir::ValueId, ir::ValueId>& view_sources);
  void produced(ir::ValueId v);
  // The calls that can run now and have not run yet, in order; marks them run.
  std::vector<const SymCall*> ready();
  // Throws CompileError when a symbolic argument of `node` is not computed yet.
  void check_ready(const ir::Node& node) const;
  void check_all_emitted() const;

 private:
  bool available(ir::ValueId v) const;

  const ir::Graph& graph_;
  const SymPrologue& prologue_;
  const std::unordered_map<ir::ValueId, ir::ValueId>& view_sources_;
  std::vector<bool> done_;      // per call
  std::vector<bool> computed_;  // per slot
  std::unordered_set<ir::ValueId> produced_;
};

}  // namespace pteron::compiler
