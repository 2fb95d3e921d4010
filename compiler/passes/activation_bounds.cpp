#include "compiler/passes/activation_bounds.h"

#include <cmath>
#include <string>

namespace pteron::compiler {

std::optional<std::pair<double, double>> activation_bounds(const ir::Node& n) {
  const double inf = INFINITY;
  const std::string op = n.op.str();
  if (op == "aten::relu.default") return std::make_pair(0.0, inf);
  if (op == "aten::hardtanh.default")
    return std::make_pair(n.args[1].to_double(), n.args[2].to_double());
  if (op == "aten::clamp.default") {
    const double lo = n.args[1].is_none() ? -inf : n.args[1].to_double();
    const double hi = n.args[2].is_none() ? inf : n.args[2].to_double();
    return std::make_pair(lo, hi);
  }
  return {};
}

}  // namespace pteron::compiler
