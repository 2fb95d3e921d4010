#include "compiler/ir/queries.h"

#include "compiler/ir/op_names.h"

namespace pteron::compiler::ir {

int64_t numel(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  return n;
}

std::string shape_str(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

bool is_op(const Node& n, std::string_view op) { return n.op.str() == op; }

bool any_overload_of(const OpRef& op, std::initializer_list<OpName> ops) {
  for (OpName o : ops) {
    if (op.ns == o.ns() && op.name == o.name()) return true;
  }
  return false;
}

bool runs_for_effect(const Node& n) { return is_op(n, ops::pteron::check_size); }

bool sym_arg_needs_bound(const OpRef& op, std::string_view arg) {
  if (op.str() == ops::pteron::check_size) return false;
  const bool slice = any_overload_of(op, {ops::aten::slice_Tensor, ops::aten::slice_copy_Tensor});
  return !(slice && (arg == "start" || arg == "end"));
}

}  // namespace pteron::compiler::ir
