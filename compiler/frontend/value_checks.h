// Run-time checks on tensor values (torch._check_tensor_all, transformers'
// torch_compilable_check, `assert lengths.max().item() <= n`): export writes each as
// _local_scalar_dense of a tensor, symbolic arithmetic on the scalar (sym_ite, comparisons) and
// _assert_scalar nodes. pteron checks no tensor value at run time (as ExecuTorch, which drops
// such asserts), so a chain whose scalar feeds nothing but those asserts is left out of the
// graph, and the compile report notes where each came from. A scalar that also sets a size or
// reaches a tensor op is not such a chain and stays (a size from a tensor value: the loader's
// read_item_size, planned at its bound and checked at run time).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/frontend/export_json.h"

namespace pteron::compiler::frontend {

struct ValueChecks {
  std::set<size_t> nodes;            // indices into the graph's nodes, left out
  std::set<std::string> symbols;     // the SymInt / SymBool names those nodes define
  std::vector<std::string> sources;  // "file:line" of each check's assert, in graph order
};

ValueChecks find_value_checks(const Json& nodes);

// Whether a node target is Python arithmetic on symbols (operator.ge, torch.sym_ite, ...).
inline bool is_symbolic_arithmetic(const std::string& target) {
  return target.starts_with("_operator.") || target.starts_with("torch.sym_");
}

}  // namespace pteron::compiler::frontend
