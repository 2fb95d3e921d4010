// Helpers the op families share: shapes, argument lists, constants and op kinds.
#include <algorithm>
#include <cstring>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool is_op(const Node& n, ir::OpName op) { return n.is(op); }

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
