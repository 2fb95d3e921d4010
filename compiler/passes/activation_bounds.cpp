#include "compiler/passes/activation_bounds.h"

#include <cmath>
#include <string>

#include "compiler/ir/op_names.h"

namespace pteron::compiler {

std::optional<std::pair<double, double>> activation_bounds(const ir::Node& n) {
  const double inf = INFINITY;
  const std::string op = n.op.str();
  if (op == ops::aten::relu) return std::make_pair(0.0, inf);
  if (op == ops::aten::hardtanh)
    return std::make_pair(n.arg("min_val").to_double(), n.arg("max_val").to_double());
  if (op == ops::aten::clamp) {
    const double lo = n.arg("min").is_none() ? -inf : n.arg("min").to_double();
    const double hi = n.arg("max").is_none() ? inf : n.arg("max").to_double();
    return std::make_pair(lo, hi);
  }
  return {};
}

}  // namespace pteron::compiler
