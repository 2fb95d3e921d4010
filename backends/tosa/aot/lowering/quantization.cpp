// INT profile quantization: RESCALE and CLAMP, the quantize after an op, dequantize/quantize
// nodes, and weights and biases read from their Q/DQ form.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

std::string qdq_reason(const Node& n) {
  // Per-tensor and per-channel forms name the dtype at different positions.
  const int dtype = n.schema ? n.schema->arg_index("dtype") : -1;
  const ir::Argument* a = dtype >= 0 ? &n.args[static_cast<size_t>(dtype)] : nullptr;
  if (a && a->is<ScalarType>() && a->get<ScalarType>() != ScalarType::Char)
    return "quantization to " + ir::dtype_name(a->get<ScalarType>()) +
           " (the INT profile lowering takes int8)";
  return "quantization parameters are not a valid int8 per-tensor scale and zero point";
}

int8_t quantize_value(double x, double scale, int64_t zp) {
  const double q = std::nearbyint(x / scale) + static_cast<double>(zp);
  return static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
}

std::string Lowerer::zp_const(DType dtype, int32_t zp) {
  if (dtype == DType::INT8) return w_.const_i8("zp", {1}, {static_cast<int8_t>(zp)}).name;
  if (dtype == DType::INT32) return w_.const_i32("zp", {1}, {zp}).name;
  if (dtype == DType::INT16) {
    const int16_t z = static_cast<int16_t>(zp);
    std::vector<uint8_t> b(2);
    std::memcpy(b.data(), &z, 2);
    return w_.add_const("zp", {1}, DType::INT16, b).name;
  }
  return w_.const_f32("zp", {1}, {0.0f}).name;
}

// RESCALE `in` (int8 or int32) by per-tensor or per-channel (last dim) factors.
TVal Lowerer::rescale(const TVal& in, const std::vector<double>& factors, int32_t in_zp,
                      int32_t out_zp, DType out_dtype) {
  std::vector<int32_t> mult;
  std::vector<int8_t> shift;
  for (double f : factors) {
    const auto s = tosa_scale32(f);
    if (!s) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "requantisation factor %.6g is outside TOSA RESCALE's range",
                    f);
      refuse(buf);
    }
    mult.push_back(s->multiplier);
    shift.push_back(s->shift);
  }
  const int64_t n = static_cast<int64_t>(factors.size());
  TVal t = tensor(in.shape, out_dtype, in);
  const std::string m = w_.const_i32("multiplier", {n}, mult).name;
  const std::string sh = w_.const_i8("shift", {n}, shift).name;
  const std::string izp = zp_const(in.dtype, in_zp);
  const std::string ozp = zp_const(out_dtype, out_zp);
  TosaAttr a;
  a.per_channel = n > 1;
  w_.add_op(Op::RESCALE, {in.name, m, sh, izp, ozp}, {t.name}, a);
  return t;
}

// int8 quantized `in` requantized to (scale, zp) when they differ.
TVal Lowerer::requantize(const TVal& in, double scale, int32_t zp) {
  if (in.scale == scale && in.zp == zp) return in;
  TVal t = rescale(in, {in.scale / scale}, in.zp, zp, DType::INT8);
  t.scale = scale;
  t.zp = zp;
  return t;
}

TVal Lowerer::clamp_i8(const TVal& in, int64_t lo, int64_t hi) {
  if (lo <= -128 && hi >= 127) return in;
  TVal t = tensor(in.shape, in.dtype, in);
  TosaAttr a;
  a.min_val = {static_cast<uint8_t>(static_cast<int8_t>(std::max<int64_t>(lo, -128)))};
  a.max_val = {static_cast<uint8_t>(static_cast<int8_t>(std::min<int64_t>(hi, 127)))};
  w_.add_op(Op::CLAMP, {in.name}, {t.name}, a);
  return t;
}

const Node* Lowerer::only_user(ValueId v) const {
  const ir::Value& value = g_.value(v);
  if (value.users.size() != 1 || is_graph_output(g_, v)) return nullptr;
  return &g_.node(value.users[0]);
}

Lowerer::OutQuant Lowerer::out_quant(const Node& n, bool fuse) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
      refuse("its secondary output (e.g. max pool indices) is used");
  const Node* user = only_user(n.outputs[0]);
  std::optional<std::pair<double, double>> bounds;
  const Node* act = nullptr;
  if (user && fuse && (bounds = activation_bounds(*user)) && in_region_.count(user->id)) {
    act = user;
    user = only_user(user->outputs[0]);
  }
  if (user == nullptr || !is_op(*user, kQuant) || !in_region_.count(user->id))
    refuse(
        "its output is not quantized by one quantize_per_tensor in the region (INT profile "
        "needs dequantize -> op -> quantize)");
  auto p = per_tensor_qparams(*user);
  if (!p) refuse("output " + qdq_reason(*user));
  OutQuant q;
  q.p = *p;
  q.lo = p->qmin;
  q.hi = p->qmax;
  if (act) {
    if (std::isfinite(bounds->first))
      q.lo = std::max<int64_t>(q.lo, quantize_value(bounds->first, p->scale, p->zp));
    if (std::isfinite(bounds->second))
      q.hi = std::min<int64_t>(q.hi, quantize_value(bounds->second, p->scale, p->zp));
    consumed_.insert(act->id);
  }
  consumed_.insert(user->id);
  q.value = user->outputs[0];
  return q;
}

// Binds the op's result: INT to the quantize's output (and the float value before it, so a
// region output there is reported), FP to the op's output.
void Lowerer::bind(const Node& n, TVal t, const OutQuant* q) {
  if (q) {
    t.quant = true;
    t.scale = q->p.scale;
    t.zp = static_cast<int32_t>(q->p.zp);
    vals_[q->value] = t;
  }
  vals_[n.outputs[0]] = t;
}

// Shape-preserving INT ops (pools, views, pad, permute): result int8 at the input's
// parameters, then requantized to the quantize's and clamped to its range.
void Lowerer::bind_shared(const Node& n, TVal t) {
  if (!is_int()) {
    bind(n, t, nullptr);
    return;
  }
  const OutQuant q = out_quant(n, false);
  t = requantize(t, q.p.scale, static_cast<int32_t>(q.p.zp));
  t = clamp_i8(t, q.lo, q.hi);
  bind(n, t, &q);
}

void Lowerer::dequantize(const Node& n) {
  if (!is_int()) refuse("quantized ops belong to the INT profile");
  auto p = per_tensor_qparams(n);
  if (!p) refuse(qdq_reason(n));
  const ir::Value& in = g_.value(n.arg("input").tensor());
  if (in.is_constant()) return;  // a per-tensor weight, read by its user
  TVal t = get(in.id);
  if (t.dtype != DType::INT8) refuse("dequantize of a non-int8 tensor");
  t.quant = true;
  t.scale = p->scale;
  t.zp = static_cast<int32_t>(p->zp);
  vals_[n.outputs[0]] = t;
}

// A quantize no op absorbed: requantizes an int8 value (dequantize -> quantize pairs).
void Lowerer::quantize(const Node& n) {
  if (!is_int()) refuse("quantized ops belong to the INT profile");
  auto p = per_tensor_qparams(n);
  if (!p) refuse(qdq_reason(n));
  const ir::Value& in = g_.value(n.arg("input").tensor());
  if (!in.is_intermediate() || !in_region_.count(in.producer))
    refuse("quantize of float '" + in.name +
           "' from outside the region (INT profile: no float tensors)");
  TVal t = get(in.id);
  if (!t.quant) refuse("quantize of a value the INT lowering holds as float");
  t = requantize(t, p->scale, static_cast<int32_t>(p->zp));
  t = clamp_i8(t, p->qmin, p->qmax);
  vals_[n.outputs[0]] = t;
}

Lowerer::Weight Lowerer::weight(ValueId v) {
  const ir::Value& value = g_.value(v);
  Weight w;
  if (!is_int()) {
    if (!value.is_constant() || value.spec.dtype != ScalarType::Float)
      refuse("weight '" + value.name + "' is not an f32 constant");
    if (!check_only_) w.values = constant_numbers(g_, v);
    w.sizes = value.spec.sizes;
    return w;
  }
  if (!value.is_intermediate() || !in_region_.count(value.producer))
    refuse("weight '" + value.name + "' is not dequantize(int8 constant) in the region");
  const Node& dq = g_.node(value.producer);
  if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel))
    refuse("weight '" + value.name + "' is not an int8 constant");
  const ir::Value& q = g_.value(dq.arg("input").tensor());
  if (!q.is_constant() || q.spec.dtype != ScalarType::Char)
    refuse("weight '" + value.name + "' is not an int8 constant");
  if (!check_only_) w.values = constant_numbers(g_, q.id);
  w.sizes = q.spec.sizes;
  const size_t channels = static_cast<size_t>(w.sizes[0]);
  if (is_op(dq, kDequant)) {
    auto p = per_tensor_qparams(dq);
    if (!p) refuse("weight " + qdq_reason(dq));
    w.scales.assign(channels, p->scale);
    w.zp = static_cast<int32_t>(p->zp);
    return w;
  }
  if (!is_op(dq, kDequantChannel)) refuse("weight is not dequantized per tensor or per channel");
  if (dq.arg("axis").to_int() != 0)
    refuse("weight quantized per channel along axis " + std::to_string(dq.arg("axis").to_int()) +
           " (TOSA rescales per output channel: axis 0)");
  if (dq.arg("dtype").get<ScalarType>() != ScalarType::Char) refuse("weight is not int8");
  w.scales = constant_numbers(g_, dq.arg("scales").tensor());
  if (w.scales.size() != channels) refuse("weight has a scale count unlike its channels");
  if (!dq.arg("zero_points").is_none()) {
    for (double z : constant_numbers(g_, dq.arg("zero_points").tensor()))
      if (z != 0)
        refuse("weight zero points are not all 0 (TOSA: one weight zero point per tensor)");
  }
  for (double s : w.scales)
    if (!(s > 0) || !std::isfinite(s)) refuse("weight scale not positive");
  return w;
}

// Bias: int32 for INT (dequantize(int32) as the quantizer writes it, or a float constant
// quantized at input_scale * weight_scale[c]), f32 for FP.
std::vector<double> Lowerer::bias(const ir::Argument& a, size_t channels, double in_scale,
                                  const Weight& w) {
  if (a.is_none()) return std::vector<double>(channels, 0.0);
  const ir::Value& value = g_.value(a.tensor());
  std::vector<double> b;
  if (value.is_intermediate()) {
    if (!is_int()) refuse("bias is not a constant");
    if (!in_region_.count(value.producer)) refuse("bias comes from outside the region");
    const Node& dq = g_.node(value.producer);
    if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel))
      refuse("bias is computed, not a constant");
    const ir::Value& q = g_.value(dq.arg("input").tensor());
    if (!q.is_constant() || q.spec.dtype != ScalarType::Int)
      refuse("bias is not dequantize(int32 constant)");
    // Its scale must be input_scale * weight_scale: the accumulator's.
    std::vector<double> scales;
    if (is_op(dq, kDequant)) {
      scales.assign(channels, dq.arg("scale").to_double());
    } else {
      scales = constant_numbers(g_, dq.arg("scales").tensor());
    }
    b = constant_numbers(g_, q.id);
    if (b.size() != channels || scales.size() != channels)
      refuse("bias has " + std::to_string(b.size()) + " values for " + std::to_string(channels) +
             " channels");
    for (size_t c = 0; c < channels; ++c) {
      const double acc = in_scale * w.scales[c];
      if (std::fabs(scales[c] - acc) > 1e-6 * acc)
        refuse("int32 bias scale differs from input_scale x weight_scale");
    }
    return b;
  }
  b = constant_numbers(g_, value.id);
  if (b.size() != channels) refuse("bias size differs from the output channels");
  if (is_int()) {
    for (size_t c = 0; c < channels; ++c) {
      const double q = std::nearbyint(b[c] / (in_scale * w.scales[c]));
      if (!(std::fabs(q) < 2147483647.0))
        refuse("bias does not fit int32 at the accumulator scale");
      b[c] = q;
    }
  }
  return b;
}

}  // namespace pteron::tosa_aot::detail
