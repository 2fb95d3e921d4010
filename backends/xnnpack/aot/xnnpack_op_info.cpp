#include "backends/xnnpack/aot/xnnpack_op_info.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "compiler/ir/constant_values.h"
#include "compiler/ir/op_names.h"

namespace pteron::xnnpack::aot {

namespace ops = compiler::ops;
using compiler::ir::OpTable;

// XNNPACK dims of a value: 4-D activations are NHWC inside a region, others as they are.
std::vector<uint32_t> xnn_dims(const TensorSpec& spec) {
  const auto& s = spec.sizes;
  if (s.empty()) return {1};
  if (s.size() == 4) return {uint32_t(s[0]), uint32_t(s[2]), uint32_t(s[3]), uint32_t(s[1])};
  return std::vector<uint32_t>(s.begin(), s.end());
}

// True when NCHW and NHWC order the elements the same (a reshape can cross the layouts).
bool nhwc_is_plain(const std::vector<int64_t>& s) { return s[1] == 1 || s[2] * s[3] == 1; }

// A float constant's elements in logical (row-major) order, whatever its dim order. The
// partitioner's support rules admit only fp32 constants here (a dequantized weight or bias goes
// through static_floats): anything else is a broken invariant, not a refusal.
std::vector<float> read_floats(const Value& v) {
  if (!v.constant || v.spec.dtype != ScalarType::Float)
    throw std::runtime_error("constant '" + v.name + "' is not fp32");
  std::string why;
  std::optional<std::vector<float>> values = compiler::ir::constant_values<float>(v, &why);
  if (!values) throw std::runtime_error(why);
  return std::move(*values);
}

// Any numeric constant's elements as doubles, in logical order (scales, zero points, int8).
std::vector<double> read_numbers(const Value& v) {
  std::string why;
  std::optional<std::vector<double>> values = compiler::ir::constant_values<double>(v, &why);
  if (!values) throw std::runtime_error(why);
  return std::move(*values);
}

// The dequantize node producing `v` from a constant (a PT2E weight), or nullptr.
const Node* weight_dequantize(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (!value.is_intermediate()) return nullptr;
  const Node& p = g.node(value.producer);
  if (!is_op(p, kDequantize) && !is_op(p, kDequantizeChannel)) return nullptr;
  return g.value(p.arg("input").tensor()).is_constant() ? &p : nullptr;
}

QuantInfo quant_of(const Graph& g, const Node& qdq) {
  QuantInfo q;
  if (is_op(qdq, kDequantizeChannel)) {
    for (double d : read_numbers(g.value(qdq.arg("scales").tensor()))) q.scales.push_back(float(d));
    if (!qdq.arg("zero_points").is_none()) {
      for (double d : read_numbers(g.value(qdq.arg("zero_points").tensor())))
        q.zero_points.push_back(int32_t(d));
    } else {
      q.zero_points.assign(q.scales.size(), 0);
    }
    q.axis = qdq.arg("axis").to_int();
  } else {
    q.scales = {float(qdq.arg("scale").to_double())};
    q.zero_points = {int32_t(qdq.arg("zero_point").to_int())};
  }
  return q;
}

// A value known at compile time in fp32: a constant, or a dequantized constant.
std::vector<float> static_floats(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.is_constant()) return read_floats(value);
  const Node* dq = weight_dequantize(g, v);
  if (!dq) throw std::runtime_error("'" + value.name + "' is not known at compile time");
  const Value& w = g.value(dq->arg("input").tensor());
  const std::vector<double> raw = read_numbers(w);
  const QuantInfo q = quant_of(g, *dq);
  std::vector<float> out(raw.size());
  int64_t inner = 1;
  if (q.axis >= 0) {
    for (size_t d = size_t(q.axis) + 1; d < w.spec.sizes.size(); ++d) inner *= w.spec.sizes[d];
  }
  for (size_t i = 0; i < raw.size(); ++i) {
    const size_t c = q.axis < 0 ? 0 : size_t((int64_t(i) / inner) % w.spec.sizes[size_t(q.axis)]);
    out[i] = float((raw[i] - q.zero_points[c]) * double(q.scales[c]));
  }
  return out;
}

bool is_static(const Graph& g, ValueId v) {
  return g.value(v).is_constant() || weight_dequantize(g, v);
}

const OpTable<OpInfo>& op_table() {
  using B = BinaryOp;
  using U = UnaryOp;
  static const OpTable<OpInfo> table = {
      {ops::aten::convolution, {Kind::kConv}},
      {ops::aten::linear, {Kind::kLinear}},
      {ops::aten::addmm, {Kind::kAddmm}},
      {ops::aten::mm, {Kind::kMm}},
      {ops::aten::add_Tensor, {Kind::kBinary, B::kAdd}},
      {ops::aten::sub_Tensor, {Kind::kBinary, B::kSubtract}},
      {ops::aten::mul_Tensor, {Kind::kBinary, B::kMultiply}},
      {ops::aten::div_Tensor, {Kind::kBinary, B::kDivide}},
      {ops::aten::add_Scalar, {Kind::kBinary, B::kAdd, U::kAbs, true}},
      {ops::aten::sub_Scalar, {Kind::kBinary, B::kSubtract, U::kAbs, true}},
      {ops::aten::mul_Scalar, {Kind::kBinary, B::kMultiply, U::kAbs, true}},
      {ops::aten::div_Scalar, {Kind::kBinary, B::kDivide, U::kAbs, true}},
      {ops::aten::maximum, {Kind::kBinary, B::kMaximum}},
      {ops::aten::minimum, {Kind::kBinary, B::kMinimum}},
      {ops::aten::relu, {Kind::kClampLike}},
      {ops::aten::hardtanh, {Kind::kClampLike}},
      {ops::aten::clamp, {Kind::kClampLike}},
      {ops::aten::abs, {Kind::kUnary, B::kAdd, U::kAbs}},
      {ops::aten::neg, {Kind::kUnary, B::kAdd, U::kNegate}},
      {ops::aten::floor, {Kind::kUnary, B::kAdd, U::kFloor}},
      {ops::aten::ceil, {Kind::kUnary, B::kAdd, U::kCeiling}},
      {ops::aten::sqrt, {Kind::kUnary, B::kAdd, U::kSquareRoot}},
      {ops::aten::sigmoid, {Kind::kUnary, B::kAdd, U::kSigmoid}},
      {ops::aten::hardswish, {Kind::kUnary, B::kAdd, U::kHardswish}},
      {ops::aten::leaky_relu, {Kind::kLeakyRelu}},
      {ops::aten::elu, {Kind::kElu}},
      {ops::aten::hardsigmoid, {Kind::kHardsigmoid}},
      {ops::aten::_softmax, {Kind::kSoftmax}},
      {ops::aten::pow_Tensor_Scalar, {Kind::kSquare}},
      {ops::aten::max_pool2d_with_indices, {Kind::kMaxPool}},
      {ops::aten::avg_pool2d, {Kind::kAvgPool}},
      {ops::aten::mean_dim, {Kind::kGlobalPool}},
      {ops::aten::_adaptive_avg_pool2d, {Kind::kGlobalPool}},
      {ops::aten::constant_pad_nd, {Kind::kPad}},
      {ops::aten::view, {Kind::kReshape}},
      {ops::aten::view_copy, {Kind::kReshape}},
      {ops::aten::squeeze_dim, {Kind::kReshape}},
      {ops::aten::squeeze_dims, {Kind::kReshape}},
      {ops::aten::squeeze_copy_dim, {Kind::kReshape}},
      {ops::aten::squeeze_copy_dims, {Kind::kReshape}},
      {ops::aten::unsqueeze, {Kind::kReshape}},
      {ops::aten::unsqueeze_copy, {Kind::kReshape}},
      {ops::aten::upsample_bilinear2d_vec, {Kind::kResize}},
      {ops::aten::upsample_bilinear2d, {Kind::kResize}},
      {ops::aten::upsample_nearest2d_vec, {Kind::kResizeNearest}},
      {ops::aten::upsample_nearest2d, {Kind::kResizeNearest}},
      {ops::aten::_to_copy, {Kind::kConvert}},
  };
  return table;
}

OpInfo info_of(const Node& n) {
  auto it = op_table().find(n.op.str());
  return it == op_table().end() ? OpInfo{} : it->second;
}

const Value& input_value(const Graph& g, const Node& n, const char* name) {
  return g.value(n.arg(name).tensor());
}

std::vector<int64_t> int_list(const Node& n, const char* name) {
  const Argument& a = n.arg(name);
  if (a.is_none()) return {};
  return a.get<std::vector<int64_t>>();
}

int64_t pair_at(const std::vector<int64_t>& v, size_t i, int64_t fallback) {
  if (v.empty()) return fallback;
  return v.size() == 1 ? v[0] : v[i];
}

// Clamp bounds of relu / hardtanh / clamp.
OutputRange clamp_range(const Node& n) {
  if (n.is(ops::aten::relu)) return OutputRange::relu();
  if (n.is(ops::aten::hardtanh)) {
    return {float(n.arg("min_val").to_double()), float(n.arg("max_val").to_double())};
  }
  OutputRange r;
  if (!n.arg("min").is_none()) r.min = float(n.arg("min").to_double());
  if (!n.arg("max").is_none()) r.max = float(n.arg("max").to_double());
  return r;
}

// Ops whose XNNPACK node takes a fused output range.
bool takes_output_range(const Node& n) {
  const OpInfo i = info_of(n);
  switch (i.kind) {
    case Kind::kConv:
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm:
    case Kind::kMaxPool:
    case Kind::kAvgPool:
      return true;
    case Kind::kBinary:
      return i.binary == BinaryOp::kAdd || i.binary == BinaryOp::kSubtract ||
             i.binary == BinaryOp::kMultiply || i.binary == BinaryOp::kDivide;
    default:
      return false;
  }
}

// PyTorch's CPU kernel (aten/src/ATen/native/UpSample.h, nearest_idx) takes source index
// min(floorf(dst * scale), in - 1) with scale = float(1 / scale_factor), or float(in) / out
// without one; 2x is a shift. A depthwise deconvolution with a kernel of ones and stride
// out / in repeats source row dst / (out / in): equal only where the float arithmetic agrees,
// which is checked here index by index (a scale like 1/s rounded down would pick row k-1).
std::string nearest_upsample_reason(int64_t in, int64_t out, double scale) {
  if (in <= 0 || out <= 0) return "upsample_nearest2d of an empty tensor";
  if (out % in != 0)
    return "upsample_nearest2d by a non-integer factor (XNNPACK has no nearest resize)";
  const int64_t factor = out / in;
  if (factor == 1 || factor == 2) return {};
  const float s = scale > 0.0 ? static_cast<float>(1.0 / scale)
                              : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t dst = 0; dst < out; ++dst) {
    const int64_t src =
        std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * s)), in - 1);
    if (src != dst / factor)
      return "upsample_nearest2d whose scale picks other rows than an integer repeat";
  }
  return {};
}

std::string reshape_reason(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  const bool in4 = in.size() == 4, out4 = out.size() == 4;
  if (!in4 && !out4) return {};
  if (in4 && out4) {
    if (nhwc_is_plain(in) && nhwc_is_plain(out)) return {};
    if (in[0] == out[0] && in[1] == out[1] && in[2] * in[3] == out[2] * out[3]) return {};
  } else if ((in4 && nhwc_is_plain(in)) || (out4 && nhwc_is_plain(out))) {
    return {};
  }
  return "reshape " + shape_str(in) + " -> " + shape_str(out) +
         " would need a transpose in NHWC (4-D values are channels-last inside XNNPACK)";
}

const char* linear_input_name(Kind kind) {
  return kind == Kind::kLinear ? "input" : (kind == Kind::kAddmm ? "mat1" : "self");
}

const char* linear_weight_name(Kind kind) { return kind == Kind::kLinear ? "weight" : "mat2"; }

}  // namespace pteron::xnnpack::aot
