// The PT2E Q/DQ patterns the lowering matches (dequantized inputs, quantized outputs, weights
// and biases) and the int8 parameters it computes from them.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/ir/constant_values.h"
#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {

namespace {

template <typename T>
std::vector<T> read_constant(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  const auto& bytes = value.constant->bytes;
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace

bool same_qparams(const QParams& a, const QParams& b) {
  return a.zp == b.zp && std::fabs(a.scale - b.scale) <= 1e-6 * std::max(a.scale, b.scale);
}

bool is_view(const Node& n) {
  return (n.is(ops::aten::view) || n.is(ops::aten::view_copy)) && n.schema != nullptr;
}

std::optional<QuantInput> dequantized(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return {};
  const Node& dq = g.node(value.producer);
  if (!is_op(dq, kDequant)) return {};
  if (dq.args.size() > 6 && !dq.arg("out_dtype").is_none() &&
      !(dq.arg("out_dtype").is<ScalarType>() &&
        dq.arg("out_dtype").get<ScalarType>() == ScalarType::Float)) {
    return {};
  }
  auto p = per_tensor_qparams(dq);
  const ValueId q = dq.arg("input").tensor();
  if (!p || g.value(q).spec.dtype != ScalarType::Char) return {};
  return QuantInput{q, *p};
}

int64_t quantize_bound(double x, const QParams& p) {
  const double q = std::nearbyint(x / p.scale) + static_cast<double>(p.zp);
  return static_cast<int64_t>(
      std::clamp(q, static_cast<double>(p.qmin), static_cast<double>(p.qmax)));
}

const Node* only_user(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (value.users.size() != 1) return nullptr;
  for (ValueId o : g.outputs())
    if (o == v) return nullptr;
  return &g.node(value.users[0]);
}

std::optional<QuantOutput> quantized_output(const Graph& g, const Node& n, bool fuse_activation) {
  if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return {};
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.outputs[i] != ir::kNoValue && !g.value(n.outputs[i]).users.empty()) return {};
  }
  const Node* user = only_user(g, n.outputs[0]);
  if (user == nullptr) return {};
  std::optional<std::pair<double, double>> bounds;
  if (fuse_activation && (bounds = activation_bounds(*user))) {
    user = only_user(g, user->outputs[0]);
    if (user == nullptr) return {};
  }
  if (!is_op(*user, kQuant)) return {};
  auto p = per_tensor_qparams(*user);
  if (!p) return {};
  QuantOutput out{user->id, *p, p->qmin, p->qmax};
  if (bounds) {
    if (std::isfinite(bounds->first))
      out.act_min = std::max(out.act_min, quantize_bound(bounds->first, *p));
    if (std::isfinite(bounds->second))
      out.act_max = std::min(out.act_max, quantize_bound(bounds->second, *p));
    if (out.act_min > out.act_max) return {};
  }
  return out;
}

std::optional<std::vector<double>> constant_as_doubles(const Graph& g, ValueId v) {
  return ir::constant_values<double>(g.value(v));
}

std::optional<QuantWeight> quantized_weight(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return {};
  const Node& dq = g.node(value.producer);
  if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel)) return {};
  const ValueId wq = dq.arg("input").tensor();
  const ir::Value& w = g.value(wq);
  if (!w.is_constant() || w.spec.dtype != ScalarType::Char || !w.spec.is_contiguous()) return {};
  QuantWeight out;
  out.data = read_constant<int8_t>(g, wq);
  out.sizes = w.spec.sizes;
  const int64_t channels = w.spec.sizes.empty() ? 1 : w.spec.sizes[0];
  if (is_op(dq, kDequant)) {
    auto p = per_tensor_qparams(dq);
    if (!p) return {};
    out.scales.assign(static_cast<size_t>(channels), p->scale);
    out.zp = p->zp;
    return out;
  }
  if (!is_op(dq, kDequantChannel)) return {};
  // dequantize_per_channel(input, scales, zero_points, axis, qmin, qmax, dtype, *, out_dtype)
  if (dq.arg("axis").get<int64_t>() != 0 || dq.arg("dtype").get<ScalarType>() != ScalarType::Char)
    return {};
  auto scales = constant_as_doubles(g, dq.arg("scales").tensor());
  if (!scales || static_cast<int64_t>(scales->size()) != channels) return {};
  if (!dq.arg("zero_points").is_none()) {
    auto zps = constant_as_doubles(g, dq.arg("zero_points").tensor());
    if (!zps) return {};
    for (double z : *zps)
      if (z != 0) return {};  // CMSIS-NN convolutions take symmetric weights
  }
  for (double s : *scales)
    if (!(s > 0) || !std::isfinite(s)) return {};
  out.scales = *scales;
  return out;
}

std::optional<std::vector<int32_t>> quantized_bias(const Graph& g, const Argument& arg,
                                                   double input_scale, const QuantWeight& w) {
  const size_t channels = w.scales.size();
  if (arg.is_none()) return std::vector<int32_t>();
  const ir::Value& value = g.value(arg.tensor());
  if (value.is_intermediate()) {
    const Node& dq = g.node(value.producer);
    if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel)) return {};
    const ir::Value& b = g.value(dq.arg("input").tensor());
    if (!b.is_constant() || b.spec.dtype != ScalarType::Int || !b.spec.is_contiguous()) return {};
    auto data = read_constant<int32_t>(g, b.id);
    if (data.size() != channels) return {};
    return data;
  }
  auto floats = constant_as_doubles(g, value.id);
  if (!floats || floats->size() != channels) return {};
  std::vector<int32_t> out(channels);
  for (size_t c = 0; c < channels; ++c) {
    const double q = std::nearbyint((*floats)[c] / (input_scale * w.scales[c]));
    if (!(std::fabs(q) < 2147483647.0)) return {};
    out[c] = static_cast<int32_t>(q);
  }
  return out;
}

std::optional<std::pair<std::vector<int32_t>, std::vector<int32_t>>> channel_requant(
    double input_scale, const std::vector<double>& weight_scales, double output_scale) {
  std::vector<int32_t> mult, shift;
  for (double ws : weight_scales) {
    const Requant r = quantize_multiplier(input_scale * ws / output_scale);
    if (r.shift > kMaxShift || r.shift < kMinShift) return {};
    mult.push_back(r.multiplier);
    shift.push_back(r.shift);
  }
  return std::make_pair(mult, shift);
}

}  // namespace pteron::cortex_m::aot::detail

namespace pteron::cortex_m::aot {

Requant quantize_multiplier(double real) {
  if (!(real > 0) || !std::isfinite(real)) return {};
  int exponent = 0;
  const double mantissa = std::frexp(real, &exponent);
  int64_t q = std::llround(mantissa * double(int64_t{1} << 31));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) return {};
  return Requant{static_cast<int32_t>(q), exponent};
}

}  // namespace pteron::cortex_m::aot
