// Helpers the op families share: shapes, argument lists, constants and op kinds.
#include <algorithm>
#include <cstring>
#include <unordered_set>

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
  static const std::unordered_set<std::string> kViews = {
      "aten::view.default",         "aten::view_copy.default", "aten::_unsafe_view.default",
      "aten::reshape.default",      "aten::squeeze.dim",       "aten::squeeze.dims",
      "aten::squeeze.default",      "aten::squeeze_copy.dim",  "aten::squeeze_copy.dims",
      "aten::squeeze_copy.default", "aten::unsqueeze.default", "aten::unsqueeze_copy.default",
      "aten::flatten.using_ints",   "aten::clone.default",     "aten::alias.default",
      "aten::alias_copy.default",   "aten::_to_copy.default",  "aten::contiguous.default",
  };
  return kViews.count(op) != 0;
}

bool is_permute_op(const std::string& op) {
  return op == "aten::permute.default" || op == "aten::permute_copy.default" ||
         op == "aten::transpose.int" || op == "aten::transpose_copy.int" ||
         op == "aten::t.default" || op == "aten::t_copy.default";
}

bool fuses_activation(const std::string& op) {
  return op == "aten::convolution.default" || op == "aten::conv2d.default" ||
         op == "aten::linear.default" || op == "aten::add.Tensor" || op == "aten::mul.Tensor";
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

}  // namespace pteron::tosa_aot::detail
