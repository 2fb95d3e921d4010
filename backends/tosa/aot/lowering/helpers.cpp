// Helpers the op families share: shapes, argument lists, constants and op kinds.
#include <algorithm>
#include <cstring>

#include "backends/tosa/aot/lowering/lowerer.h"
#include "compiler/ir/constant_values.h"

namespace pteron::tosa_aot::detail {

std::vector<double> constant_numbers(const Graph& g, ValueId v) {
  std::string why;
  std::optional<std::vector<double>> values = ir::constant_values<double>(g.value(v), &why);
  if (!values) refuse(why);
  return std::move(*values);
}

std::vector<int64_t> int_list(const ir::Argument& a) {
  if (a.is<std::vector<int64_t>>()) return a.get<std::vector<int64_t>>();
  if (a.is<int64_t>()) return {a.get<int64_t>()};
  return {};
}

std::vector<int64_t> pair_arg(const ir::Argument& a, int64_t fill) {
  std::vector<int64_t> v = int_list(a);
  if (v.empty()) return {fill, fill};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

int64_t norm_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

std::vector<uint8_t> f32_bytes(float x) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &x, 4);
  return b;
}

bool is_view_op(const std::string& op) {
  for (const ir::OpName view :
       {ops::aten::view, ops::aten::view_copy, ops::aten::squeeze_dim, ops::aten::squeeze_dims,
        ops::aten::squeeze, ops::aten::squeeze_copy_dim, ops::aten::squeeze_copy_dims,
        ops::aten::squeeze_copy, ops::aten::unsqueeze, ops::aten::unsqueeze_copy, ops::aten::clone,
        ops::aten::alias, ops::aten::alias_copy, ops::aten::_to_copy})
    if (op == view) return true;
  return false;
}

bool is_permute_op(const std::string& op) {
  return op == ops::aten::permute || op == ops::aten::permute_copy ||
         op == ops::aten::transpose_int || op == ops::aten::transpose_copy_int ||
         op == ops::aten::t || op == ops::aten::t_copy;
}

bool fuses_activation(const std::string& op) {
  return op == ops::aten::convolution || op == ops::aten::linear || op == ops::aten::add_Tensor ||
         op == ops::aten::mul_Tensor;
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

}  // namespace pteron::tosa_aot::detail
