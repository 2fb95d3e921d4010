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

std::vector<size_t> subgraph_args(const Node& n) {
  if (is_op(n, ops::pteron::cond) || is_op(n, ops::pteron::while_loop)) return {2, 3};
  if (is_op(n, ops::pteron::scan)) return {3};
  return {};
}

bool is_control_flow(const Node& n) { return !subgraph_args(n).empty(); }

bool sym_arg_needs_bound(const OpSchema& schema, size_t arg) {
  if (arg >= schema.args.size()) return true;
  const ArgSchema& a = schema.args[arg];
  if (a.type.base != BaseType::Int || schema.op.str() == ops::pteron::check_size) return false;
  const OpRef& op = schema.op;
  if (any_overload_of(op, {ops::aten::slice_Tensor, ops::aten::slice_copy_Tensor}))
    return a.name != "start" && a.name != "end";
  if (any_overload_of(op, {ops::aten::select_int, ops::aten::select_copy_int}))
    return a.name != "index";
  return true;
}

}  // namespace pteron::compiler::ir
