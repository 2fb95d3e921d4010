// Helpers the op families share: shapes, argument lists, constants and op kinds.
#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

std::vector<double> constant_numbers(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_constant()) refuse("'" + value.name + "' is not a constant");
  const ir::TensorSpec& s = value.spec;
  const std::vector<int64_t> strides = s.strides();
  const uint8_t* base = value.constant->bytes.data();
  const size_t n = static_cast<size_t>(s.numel());
  if (value.constant->bytes.size() < s.nbytes()) refuse("constant '" + value.name + "' is short");
  std::vector<double> out(n);
  std::vector<int64_t> idx(s.rank(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < s.rank(); ++d) off += idx[d] * strides[d];
    const uint8_t* p = base + static_cast<size_t>(off) * ir::dtype_size(s.dtype);
    switch (s.dtype) {
      case ScalarType::Float: {
        float x;
        std::memcpy(&x, p, 4);
        out[i] = x;
        break;
      }
      case ScalarType::Double: {
        double x;
        std::memcpy(&x, p, 8);
        out[i] = x;
        break;
      }
      case ScalarType::Char:
        out[i] = static_cast<int8_t>(*p);
        break;
      case ScalarType::Bool:
        out[i] = *p != 0;
        break;
      case ScalarType::Int: {
        int32_t x;
        std::memcpy(&x, p, 4);
        out[i] = x;
        break;
      }
      case ScalarType::Long: {
        int64_t x;
        std::memcpy(&x, p, 8);
        out[i] = static_cast<double>(x);
        break;
      }
      default:
        refuse("constant '" + value.name + "' has dtype " + ir::dtype_name(s.dtype));
    }
    for (size_t d = s.rank(); d-- > 0;) {
      if (++idx[d] < s.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
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
