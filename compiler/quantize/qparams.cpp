#include "compiler/quantize/qparams.h"

#include <cmath>

namespace pteron::compiler {

std::optional<QParams> per_tensor_qparams(const ir::Node& n) {
  const std::vector<ir::Argument>& a = n.args;
  if (a.size() < 6 || !a[1].is<double>() || !a[2].is<int64_t>()) return std::nullopt;
  if (!a[5].is<ir::ScalarType>() || a[5].get<ir::ScalarType>() != ir::ScalarType::Char)
    return std::nullopt;
  const QParams p{a[1].get<double>(), a[2].get<int64_t>(), a[3].get<int64_t>(),
                  a[4].get<int64_t>()};
  if (!(p.scale > 0) || !std::isfinite(p.scale) || p.zp < -128 || p.zp > 127 || p.qmin < -128 ||
      p.qmax > 127 || p.qmin > p.qmax)
    return std::nullopt;
  return p;
}

}  // namespace pteron::compiler
