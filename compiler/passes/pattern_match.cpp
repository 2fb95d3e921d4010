#include "compiler/passes/pattern_match.h"

#include <algorithm>

#include "compiler/ir/constant_values.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler {

bool is_unused(const ir::Graph& graph, ir::ValueId v) {
  return v == ir::kNoValue || (graph.value(v).users.empty() && !graph.is_output(v));
}

bool single_use_intermediate(const ir::Graph& graph, const ir::Value& v) {
  return v.is_intermediate() && v.users.size() == 1 && !graph.is_output(v.id);
}

const ir::Node* private_producer(const ir::Graph& graph, ir::ValueId v,
                                 const std::vector<ir::NodeId>& also_read_by) {
  const ir::Value& value = graph.value(v);
  if (!value.is_intermediate() || graph.is_output(v)) return nullptr;
  size_t readers = 0;
  for (ir::NodeId u : value.users) {
    readers += std::find(also_read_by.begin(), also_read_by.end(), u) == also_read_by.end();
  }
  return readers == 1 ? &graph.node(value.producer) : nullptr;
}

bool is_op(const ir::Node* n, ir::OpName op) { return n != nullptr && n->is(op); }

bool is_tensor_mul(const ir::Node& n) {
  return n.is(ops::aten::mul_Tensor) && n.args.size() == 2 && n.arg("self").is_tensor() &&
         n.arg("other").is_tensor();
}

std::optional<SoleProduct> sole_product(const ir::Graph& graph,
                                        const std::unordered_set<ir::NodeId>& delegated,
                                        ir::ValueId v) {
  const ir::Value& value = graph.value(v);
  if (!single_use_intermediate(graph, value) || delegated.count(value.users[0]))
    return std::nullopt;
  const ir::Node& mul = graph.node(value.users[0]);
  if (!is_tensor_mul(mul) || mul.arg("self").tensor() == mul.arg("other").tensor())
    return std::nullopt;
  return SoleProduct{
      mul.id, mul.arg("self").tensor() == v ? mul.arg("other").tensor() : mul.arg("self").tensor()};
}

std::optional<double> constant_scalar(const ir::Graph& graph, const ir::Argument& a) {
  if (a.is<ir::Scalar>() || a.is<double>() || a.is<int64_t>()) return a.to_double();
  if (!a.is_tensor()) return std::nullopt;
  const ir::Value& v = graph.value(a.tensor());
  // The frontend wraps a Python number in an add.Tensor / div.Tensor as a 0-d constant of the
  // number's type: int64 for `x + 3`, float32 for `x / 6.0` (float64 in a float64 graph).
  const ScalarType t = v.spec.dtype;
  if (!v.is_constant() || v.spec.numel() != 1 ||
      (t != ScalarType::Float && t != ScalarType::Double && t != ScalarType::Long)) {
    return std::nullopt;
  }
  const std::optional<std::vector<double>> values = ir::constant_values<double>(v);
  if (!values.has_value()) return std::nullopt;
  return (*values)[0];
}

std::optional<RowSelection> one_row_selection(const ir::Graph& graph, const ir::Node& select) {
  if (!select.is(ops::aten::select_int)) return std::nullopt;
  const ir::TensorSpec& in = graph.value(select.arg("self").tensor()).spec;
  const int64_t rank = static_cast<int64_t>(in.rank());
  int64_t dim = select.arg("dim").to_int(), index = select.arg("index").to_int();
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank - 1) return std::nullopt;  // selecting features is not a row selection
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (d != dim && in.sizes[d] != 1) return std::nullopt;  // a row of each of several sequences
  }
  const int64_t rows = in.sizes[dim];
  if (index < 0) index += rows;
  if (index < 0 || index >= rows) return std::nullopt;
  return RowSelection{dim, index, rows};
}

}  // namespace pteron::compiler
