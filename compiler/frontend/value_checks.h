// Run-time checks on tensor values (torch._check_tensor_all, transformers'
// torch_compilable_check, `torch._check(lengths.max().item() <= n)`): export writes each as
// _local_scalar_dense of a tensor, symbolic arithmetic on the scalar (sym_ite, comparisons) and
// _assert_scalar nodes. A chain pteron can evaluate (an integer tensor's value under integer
// arithmetic and comparisons; a bool tensor's value, as sym_ite(b, 1, 0) or asserted itself)
// stays: the loader turns its asserts into pteron::check_size nodes, which fail the call with
// export's message as torch's exported program does (ExecuTorch drops them). Any other (a
// float's value) is left out of the graph with the tensor ops computing only its condition,
// and the compile report notes where each came from. A scalar that also sets a size or reaches
// a tensor op is not a check alone (a size from a tensor value: the loader's read_item_size).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/frontend/export_json.h"
#include "compiler/ir/dtype.h"

namespace pteron::compiler::frontend {

struct ValueChecks {
  std::set<size_t> nodes;            // indices into the graph's nodes, left out
  std::set<std::string> symbols;     // the SymInt / SymBool / SymFloat names those nodes define
  std::vector<std::string> sources;  // "file:line" of each left-out check's assert, in order
  // The scalars (_local_scalar_dense outputs) of the chains that stay: checked at run time,
  // never a size.
  std::set<std::string> enforced;
  // The sym_ite(flag, 1, 0) outputs of those chains' bool scalars (export's expression for them
  // is a Piecewise the loader replaces with the flag's symbol).
  std::set<std::string> flag_ints;
};

// `tensor_values`: the graph's tensor metadata (each scalar's tensor dtype decides).
ValueChecks find_value_checks(const Json& nodes, const Json& tensor_values);

// Values read from tensors with item() that the program computes as tensors: torch.cond
// predicates (`x.sum().item() > 0.5`, `(x > 0).all().item()`, `n.item() * 2 > t.item()`) and
// floats or bools passed to tensor ops (`x / x.abs().max().item()`, `torch.full(s, t.item())`,
// `x.clamp(-m, m)` with `m = t.item()`). Export writes _local_scalar_dense, Python arithmetic and
// comparisons on the scalars (SymFloat, SymInt, SymBool), and the cond or op reads the result.
// Where every use of such a scalar ends in a cond predicate or, as a SymFloat or SymBool, in a
// tensor op's argument, the loader computes the chain with tensor ops on the one-element tensors
// instead (Loader::lifted_scalar), as eager Python does on the numbers: no value leaves the
// program's tensors, and floating values, which pteron's size symbols cannot hold, work too. An
// int reaching a tensor op may be a size and keeps the size symbols' path. Export's range
// asserts of a bool's value (0 <= sym_ite(b, 1, 0) <= 1), which hold for any bool, go with it; a
// chain with any other assert is not lifted (value_checks and the size symbols read it as
// before).
struct LiftedScalars {
  std::set<size_t> nodes;                    // the chains' nodes: not read as nodes
  std::map<std::string, size_t> defined_by;  // each scalar name they define: its node
};
LiftedScalars find_lifted_scalars(const Json& nodes, const Json& tensor_values);

// The integer dtypes whose one-element tensors item() reads as a SymInt pteron evaluates (a
// size, or a checked value).
inline bool is_item_integer(ir::ScalarType t) {
  return t == ir::ScalarType::Long || t == ir::ScalarType::Int || t == ir::ScalarType::Short ||
         t == ir::ScalarType::Char || t == ir::ScalarType::Byte;
}

// Whether a node target is Python arithmetic on symbols (operator.ge, torch.sym_ite, ...).
inline bool is_symbolic_arithmetic(const std::string& target) {
  return target.starts_with("_operator.") || target.starts_with("torch.sym_");
}

}  // namespace pteron::compiler::frontend
