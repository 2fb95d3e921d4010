#include "backends/xnnpack/aot/xnnpack_partitioner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "backends/xnnpack/aot/payload_builder.h"
#include "compiler/partition/registry.h"

namespace pteron::xnnpack {
namespace {

using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::ScalarType;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

const std::vector<uint8_t> kChannelsLast = {0, 2, 3, 1};

std::string shape_str(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// XNNPACK dims of a value: 4-D activations are NHWC inside a region, others as they are.
std::vector<uint32_t> xnn_dims(const TensorSpec& spec) {
  const auto& s = spec.sizes;
  if (s.empty()) return {1};
  if (s.size() == 4) return {uint32_t(s[0]), uint32_t(s[2]), uint32_t(s[3]), uint32_t(s[1])};
  return std::vector<uint32_t>(s.begin(), s.end());
}

// True when NCHW and NHWC order the elements the same (a reshape can cross the layouts).
bool nhwc_is_plain(const std::vector<int64_t>& s) { return s[1] == 1 || s[2] * s[3] == 1; }

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A float constant's elements in logical (row-major) order, whatever its dim order.
std::vector<float> read_floats(const Value& v) {
  if (!v.constant || v.spec.dtype != ScalarType::Float) throw std::runtime_error("constant '" + v.name + "' is not fp32");
  const auto& sizes = v.spec.sizes;
  const std::vector<int64_t> strides = v.spec.strides();
  const int64_t n = numel(sizes);
  if (v.constant->bytes.size() < size_t(n) * 4) throw std::runtime_error("constant '" + v.name + "' is short");
  const float* src = reinterpret_cast<const float*>(v.constant->bytes.data());
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += index[d] * strides[d];
    std::memcpy(&out[size_t(i)], src + off, 4);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Any numeric constant's elements as doubles, in logical order (scales, zero points, int8).
std::vector<double> read_numbers(const Value& v) {
  if (!v.constant) throw std::runtime_error("'" + v.name + "' is not a constant");
  const auto& sizes = v.spec.sizes;
  const std::vector<int64_t> strides = v.spec.strides();
  const int64_t n = numel(sizes);
  const size_t es = compiler::ir::dtype_size(v.spec.dtype);
  if (es == 0 || v.constant->bytes.size() < size_t(n) * es) throw std::runtime_error("constant '" + v.name + "' is short");
  const uint8_t* base = v.constant->bytes.data();
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += index[d] * strides[d];
    const uint8_t* p = base + off * int64_t(es);
    double x;
    switch (v.spec.dtype) {
      case ScalarType::Float: { float f; std::memcpy(&f, p, 4); x = f; break; }
      case ScalarType::Double: std::memcpy(&x, p, 8); break;
      case ScalarType::Char: x = double(*reinterpret_cast<const int8_t*>(p)); break;
      case ScalarType::Byte: x = double(*p); break;
      case ScalarType::Int: { int32_t k; std::memcpy(&k, p, 4); x = double(k); break; }
      case ScalarType::Long: { int64_t k; std::memcpy(&k, p, 8); x = double(k); break; }
      default: throw std::runtime_error("constant '" + v.name + "' has an unsupported dtype");
    }
    out[size_t(i)] = x;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

constexpr const char kQuantize[] = "quantized_decomposed::quantize_per_tensor.default";
constexpr const char kDequantize[] = "quantized_decomposed::dequantize_per_tensor.default";
constexpr const char kDequantizeChannel[] = "quantized_decomposed::dequantize_per_channel.default";

bool is_op(const Node& n, const char* op) { return n.op.str() == op; }

// The dequantize node producing `v` from a constant (a PT2E weight), or nullptr.
const Node* weight_dequantize(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (!value.is_intermediate()) return nullptr;
  const Node& p = g.node(value.producer);
  if (!is_op(p, kDequantize) && !is_op(p, kDequantizeChannel)) return nullptr;
  return g.value(p.arg("input").tensor()).is_constant() ? &p : nullptr;
}

// int8 quantization of an activation or weight: per-tensor, or per-channel along `axis`.
struct QuantInfo {
  std::vector<float> scales;  // one (per tensor) or one per channel
  std::vector<int32_t> zero_points;
  int64_t axis = -1;          // -1: per tensor
};

QuantInfo quant_of(const Graph& g, const Node& qdq) {
  QuantInfo q;
  if (is_op(qdq, kDequantizeChannel)) {
    for (double d : read_numbers(g.value(qdq.arg("scales").tensor()))) q.scales.push_back(float(d));
    if (!qdq.arg("zero_points").is_none()) {
      for (double d : read_numbers(g.value(qdq.arg("zero_points").tensor()))) q.zero_points.push_back(int32_t(d));
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

bool is_static(const Graph& g, ValueId v) { return g.value(v).is_constant() || weight_dequantize(g, v); }

// Row-major data of `sizes` permuted: out dims are sizes[perm[i]].
template <typename T>
std::vector<T> permute(const std::vector<T>& in, const std::vector<int64_t>& sizes,
                       const std::vector<size_t>& perm) {
  const size_t r = sizes.size();
  std::vector<int64_t> in_strides(r, 1);
  for (size_t d = r - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * sizes[d + 1];
  std::vector<int64_t> out_sizes(r);
  for (size_t i = 0; i < r; ++i) out_sizes[i] = sizes[perm[i]];
  std::vector<T> out(in.size());
  std::vector<int64_t> index(r, 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += index[d] * in_strides[perm[d]];
    out[i] = in[size_t(off)];
    for (size_t d = r; d-- > 0;) {
      if (++index[d] < out_sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// ---- which op a node is ----

enum class Kind {
  kUnsupported,
  kConv,
  kLinear,
  kAddmm,
  kMm,
  kBinary,
  kClampLike,
  kUnary,
  kLeakyRelu,
  kElu,
  kSoftmax,
  kSquare,
  kMaxPool,
  kAvgPool,
  kGlobalPool,
  kPad,
  kReshape,
  kResize,
  kConvert,
};

struct OpInfo {
  Kind kind = Kind::kUnsupported;
  BinaryOp binary = BinaryOp::kAdd;
  UnaryOp unary = UnaryOp::kAbs;
  bool scalar_other = false;  // the Scalar overload of a binary op
};

const std::map<std::string, OpInfo>& op_table() {
  static const std::map<std::string, OpInfo> table = [] {
    std::map<std::string, OpInfo> t;
    t["aten::convolution.default"] = {Kind::kConv};
    t["aten::linear.default"] = {Kind::kLinear};
    t["aten::addmm.default"] = {Kind::kAddmm};
    t["aten::mm.default"] = {Kind::kMm};
    const std::pair<const char*, BinaryOp> binaries[] = {{"add", BinaryOp::kAdd},
                                                         {"sub", BinaryOp::kSubtract},
                                                         {"mul", BinaryOp::kMultiply},
                                                         {"div", BinaryOp::kDivide}};
    for (const auto& [name, op] : binaries) {
      t[std::string("aten::") + name + ".Tensor"] = {Kind::kBinary, op};
      t[std::string("aten::") + name + ".Scalar"] = {Kind::kBinary, op, UnaryOp::kAbs, true};
    }
    t["aten::maximum.default"] = {Kind::kBinary, BinaryOp::kMaximum};
    t["aten::minimum.default"] = {Kind::kBinary, BinaryOp::kMinimum};
    for (const char* op : {"aten::relu.default", "aten::hardtanh.default", "aten::clamp.default"}) {
      t[op] = {Kind::kClampLike};
    }
    const std::pair<const char*, UnaryOp> unaries[] = {
        {"aten::abs.default", UnaryOp::kAbs},         {"aten::neg.default", UnaryOp::kNegate},
        {"aten::floor.default", UnaryOp::kFloor},     {"aten::ceil.default", UnaryOp::kCeiling},
        {"aten::sqrt.default", UnaryOp::kSquareRoot}, {"aten::sigmoid.default", UnaryOp::kSigmoid},
        {"aten::hardswish.default", UnaryOp::kHardswish}};
    for (const auto& [name, op] : unaries) t[name] = {Kind::kUnary, BinaryOp::kAdd, op};
    t["aten::leaky_relu.default"] = {Kind::kLeakyRelu};
    t["aten::elu.default"] = {Kind::kElu};
    t["aten::_softmax.default"] = {Kind::kSoftmax};
    t["aten::pow.Tensor_Scalar"] = {Kind::kSquare};
    t["aten::max_pool2d_with_indices.default"] = {Kind::kMaxPool};
    t["aten::max_pool2d.default"] = {Kind::kMaxPool};
    t["aten::avg_pool2d.default"] = {Kind::kAvgPool};
    t["aten::mean.dim"] = {Kind::kGlobalPool};
    t["aten::_adaptive_avg_pool2d.default"] = {Kind::kGlobalPool};
    t["aten::adaptive_avg_pool2d.default"] = {Kind::kGlobalPool};
    t["aten::constant_pad_nd.default"] = {Kind::kPad};
    for (const char* op : {"aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default",
                           "aten::view_copy.default", "aten::squeeze.dim", "aten::squeeze.dims",
                           "aten::squeeze_copy.dim", "aten::squeeze_copy.dims", "aten::unsqueeze.default",
                           "aten::unsqueeze_copy.default", "aten::flatten.using_ints"}) {
      t[op] = {Kind::kReshape};
    }
    t["aten::upsample_bilinear2d.vec"] = {Kind::kResize};
    t["aten::upsample_bilinear2d.default"] = {Kind::kResize};
    t["aten::_to_copy.default"] = {Kind::kConvert};
    return t;
  }();
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
  const std::string op = n.op.str();
  if (op == "aten::relu.default") return OutputRange::relu();
  if (op == "aten::hardtanh.default") {
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

// ---- support rules ----

std::string check_float_activation(const Graph& g, ValueId v, const char* what) {
  const TensorSpec& s = g.value(v).spec;
  if (s.dtype != ScalarType::Float) {
    return std::string(what) + " is " + compiler::ir::dtype_name(s.dtype) + " (XNNPACK fp32 path takes f32)";
  }
  if (s.rank() > 6) return std::string(what) + " has rank " + std::to_string(s.rank()) + " (XNNPACK: at most 6)";
  for (int64_t d : s.sizes) {
    if (d < 1) return std::string(what) + " has an empty dimension " + shape_str(s.sizes);
  }
  return {};
}

std::string check_constant(const Graph& g, const Argument& a, const char* what) {
  if (a.is_none()) return {};
  const Value& v = g.value(a.tensor());
  if (weight_dequantize(g, v.id)) return {};
  if (!v.is_constant()) return std::string(what) + " is not a constant (XNNPACK needs static weights)";
  if (v.spec.dtype != ScalarType::Float) return std::string(what) + " is " + compiler::ir::dtype_name(v.spec.dtype) + ", not f32";
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

// A flatten [N, C, H, W] -> [N, C*H*W] whose every reader is a linear layer with a constant
// weight: in NHWC the flattened order is (h, w, c), which the lowering absorbs by permuting
// the weight's input columns at compile time (no transpose at run time).
bool is_flatten_into_linears(const Graph& g, const Node& n) {
  const TensorSpec& in = g.value(n.inputs()[0]).spec;
  const ValueId y = n.outputs[0];
  const TensorSpec& out = g.value(y).spec;
  if (in.rank() != 4 || out.rank() != 2 || out.sizes[0] != in.sizes[0]) return false;
  const Value& v = g.value(y);
  if (v.users.empty() || std::find(g.outputs().begin(), g.outputs().end(), y) != g.outputs().end()) return false;
  for (NodeId u : v.users) {
    const Node& user = g.node(u);
    const Kind k = info_of(user).kind;
    if (k != Kind::kLinear && k != Kind::kAddmm && k != Kind::kMm) return false;
    if (user.arg(linear_input_name(k)).tensor() != y) return false;
    if (!g.value(user.arg(linear_weight_name(k)).tensor()).is_constant()) return false;
  }
  return true;
}

// quantize / dequantize of int8 (PT2E form): activations per tensor; weights (constants) per
// tensor or per output channel.
std::string check_qdq(const Graph& g, const Node& n) {
  if (n.arg("dtype").get<ScalarType>() != ScalarType::Char) return "quantization to a dtype other than int8";
  if (n.arg("quant_min").to_int() < -128 || n.arg("quant_max").to_int() > 127) return "quantization range beyond int8";
  const Value& x = g.value(n.arg("input").tensor());
  const std::string op = n.op.str();
  if (op == kDequantizeChannel) {
    if (!x.is_constant()) return "per-channel dequantize of an activation (XNNPACK: per-channel weights only)";
    if (!g.value(n.arg("scales").tensor()).is_constant()) return "per-channel scales are not constant";
    if (!n.arg("zero_points").is_none() && !g.value(n.arg("zero_points").tensor()).is_constant()) return "zero points not constant";
    if (n.arg("axis").to_int() != 0) return "per-channel dequantize along axis " + std::to_string(n.arg("axis").to_int()) + " (0 only)";
  }
  if (op != kQuantize && !n.arg("out_dtype").is_none() && n.arg("out_dtype").get<ScalarType>() != ScalarType::Float) {
    return "dequantize to a dtype other than f32";
  }
  if (x.spec.dtype != (op == kQuantize ? ScalarType::Float : ScalarType::Char)) return "unexpected input dtype";
  if (x.spec.rank() == 0 || x.spec.rank() > 6) return "rank " + std::to_string(x.spec.rank());
  return {};
}

std::string check_node(const Graph& g, const Node& n) {
  const OpInfo info = info_of(n);
  const std::string op = n.op.str();
  if (info.kind == Kind::kUnsupported) {
    if (op.rfind("aten::permute", 0) == 0 || op.rfind("aten::transpose", 0) == 0) {
      return op + ": this XNNPACK snapshot has no transpose";
    }
    if (op == kQuantize || op == kDequantize || op == kDequantizeChannel) return check_qdq(g, n);
    if (op.rfind("quantized_decomposed::", 0) == 0) return op + ": only per-tensor int8 activations and int8 weights";
    return op + " is not among the operators this XNNPACK snapshot runs";
  }
  if (n.outputs.empty() || n.outputs[0] == compiler::ir::kNoValue) return "no output";
  const ValueId out = n.outputs[0];
  if (std::string why = check_float_activation(g, out, "output"); !why.empty()) return why;
  const TensorSpec& os = g.value(out).spec;
  if (os.rank() == 0) return "0-d output";
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    const ValueId extra = n.outputs[i];
    if (extra == compiler::ir::kNoValue) continue;
    const Value& v = g.value(extra);
    const bool graph_output = std::find(g.outputs().begin(), g.outputs().end(), extra) != g.outputs().end();
    if (!v.users.empty() || graph_output) return "output " + std::to_string(i) + " (e.g. pool indices) is used";
  }
  // Every non-constant tensor input is an fp32 activation (or a dequantized weight).
  for (ValueId v : n.inputs()) {
    if (is_static(g, v)) continue;
    if (std::string why = check_float_activation(g, v, "input"); !why.empty()) return why;
  }
  switch (info.kind) {
    case Kind::kConv: {
      const Value& x = input_value(g, n, "input");
      const Value& w = input_value(g, n, "weight");
      if (x.spec.rank() != 4 || w.spec.rank() != 4) return "only 2-D convolution (4-D input and weight)";
      if (n.arg("transposed").get<bool>()) return "transposed convolution is not lowered";
      if (std::string why = check_constant(g, n.arg("weight"), "weight"); !why.empty()) return why;
      if (std::string why = check_constant(g, n.arg("bias"), "bias"); !why.empty()) return why;
      const int64_t groups = n.arg("groups").to_int();
      if (groups < 1 || x.spec.sizes[1] % groups != 0 || w.spec.sizes[0] % groups != 0) return "bad groups";
      return {};
    }
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm: {
      const char* in_name = info.kind == Kind::kLinear ? "input" : (info.kind == Kind::kAddmm ? "mat1" : "self");
      const char* w_name = info.kind == Kind::kLinear ? "weight" : "mat2";
      const Value& x = input_value(g, n, in_name);
      if (x.spec.rank() < 2 || x.spec.rank() == 4) {
        return "linear input of rank " + std::to_string(x.spec.rank()) +
               " (XNNPACK keeps 4-D values NHWC; ranks 2, 3, 5, 6 only)";
      }
      if (std::string why = check_constant(g, n.arg(w_name), "weight"); !why.empty()) return why;
      if (g.value(n.arg(w_name).tensor()).spec.rank() != 2) return "weight is not 2-D";
      if (info.kind == Kind::kLinear) return check_constant(g, n.arg("bias"), "bias");
      if (info.kind == Kind::kAddmm) {
        if (n.arg("beta").to_double() != 1.0 || n.arg("alpha").to_double() != 1.0) return "addmm with alpha/beta != 1";
        if (std::string why = check_constant(g, n.arg("self"), "bias"); !why.empty()) return why;
        const auto& bs = g.value(n.arg("self").tensor()).spec.sizes;
        const int64_t cols = g.value(n.arg("mat2").tensor()).spec.sizes[1];
        if (numel(bs) != cols || (bs.size() == 2 && bs[0] != 1)) return "addmm bias is not one value per output column";
      }
      return {};
    }
    case Kind::kBinary: {
      if (info.scalar_other || op == "aten::add.Tensor" || op == "aten::sub.Tensor") {
        if (op.rfind("aten::add", 0) == 0 || op.rfind("aten::sub", 0) == 0) {
          const bool other_constant = info.scalar_other || g.value(n.arg("other").tensor()).is_constant();
          if (n.arg("alpha").to_double() != 1.0 && !other_constant) return "alpha != 1 with a non-constant other";
        }
      }
      if (info.scalar_other) return {};
      for (const char* name : {"self", "other"}) {
        const Value& v = input_value(g, n, name);
        if (v.is_constant()) {
          if (v.spec.dtype != ScalarType::Float) return std::string(name) + " constant is " + compiler::ir::dtype_name(v.spec.dtype);
          continue;
        }
        if (os.rank() == 4 && v.spec.rank() != 4) {
          return std::string("broadcasts a ") + std::to_string(v.spec.rank()) +
                 "-D activation against a 4-D one (4-D values are NHWC inside XNNPACK)";
        }
      }
      return {};
    }
    case Kind::kClampLike: {
      const OutputRange r = clamp_range(n);
      if (!(r.min <= r.max)) return "clamp with min > max";
      return {};
    }
    case Kind::kUnary:
      return {};
    case Kind::kLeakyRelu:
      return {};
    case Kind::kElu:
      if (n.arg("scale").to_double() != 1.0 || n.arg("input_scale").to_double() != 1.0) {
        return "elu with scale or input_scale != 1";
      }
      return {};
    case Kind::kSoftmax: {
      int64_t dim = n.arg("dim").to_int();
      const int64_t r = int64_t(os.rank());
      if (dim < 0) dim += r;
      if (n.arg("half_to_float").get<bool>()) return "softmax with half_to_float";
      const int64_t innermost = r == 4 ? 1 : r - 1;
      if (dim != innermost) {
        return "softmax over dim " + std::to_string(dim) + " (XNNPACK: innermost dim only" +
               (r == 4 ? "; 4-D values are NHWC, so only dim 1)" : ")");
      }
      return {};
    }
    case Kind::kSquare:
      if (n.arg("exponent").to_double() != 2.0) return "pow with an exponent other than 2";
      return {};
    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      const Value& x = input_value(g, n, "self");
      if (x.spec.rank() != 4) return "pool on a " + std::to_string(x.spec.rank()) + "-D tensor (4-D only)";
      const auto k = int_list(n, "kernel_size");
      if (pair_at(k, 0, 1) * pair_at(k, 1, 1) < 2) return "pool of a single element";
      const bool ceil = n.arg("ceil_mode").get<bool>();
      const auto pad = int_list(n, "padding");
      if (info.kind == Kind::kMaxPool) {
        const auto dil = int_list(n, "dilation");
        if (ceil && (pair_at(dil, 0, 1) != 1 || pair_at(dil, 1, 1) != 1)) return "dilation with ceil_mode";
        return {};
      }
      if (!n.arg("divisor_override").is_none()) return "avg_pool2d with divisor_override";
      const bool pads = pair_at(pad, 0, 0) || pair_at(pad, 1, 0);
      if (pads && n.arg("count_include_pad").get<bool>()) {
        return "avg_pool2d with padding and count_include_pad=True (XNNPACK divides by input pixels only)";
      }
      if (ceil) {
        const auto s = int_list(n, "stride");
        for (size_t i = 0; i < 2; ++i) {
          const int64_t in = x.spec.sizes[2 + i], kk = pair_at(k, i, 1), st = pair_at(s, i, kk), p = pair_at(pad, i, 0);
          if ((in + 2 * p - kk) / st + 1 != os.sizes[2 + i]) return "avg_pool2d ceil_mode changes the output size";
        }
      }
      return {};
    }
    case Kind::kGlobalPool: {
      const Value& x = input_value(g, n, "self");
      if (x.spec.rank() != 4) return "mean over a " + std::to_string(x.spec.rank()) + "-D tensor (only 4-D H,W)";
      if (op == "aten::mean.dim") {
        std::vector<int64_t> dims = int_list(n, "dim");
        for (int64_t& d : dims) d = d < 0 ? d + 4 : d;
        std::sort(dims.begin(), dims.end());
        if (dims != std::vector<int64_t>{2, 3}) return "mean over dims other than H,W";
        if (!n.arg("dtype").is_none()) return "mean with dtype";
        return {};
      }
      const auto size = int_list(n, "output_size");
      if (size.size() != 2 || size[0] != 1 || size[1] != 1) return "adaptive_avg_pool2d with output size other than 1x1";
      return {};
    }
    case Kind::kPad: {
      const auto pad = int_list(n, "pad");
      for (int64_t p : pad) {
        if (p < 0) return "negative padding (cropping)";
      }
      if (pad.size() % 2 || pad.size() / 2 > g.value(n.arg("self").tensor()).spec.rank()) return "bad pad list";
      return {};
    }
    case Kind::kReshape: {
      const Value& x = g.value(n.inputs()[0]);
      std::string why = reshape_reason(x.spec.sizes, os.sizes);
      if (!why.empty() && is_flatten_into_linears(g, n)) return {};
      return why;
    }
    case Kind::kResize: {
      const Value& x = g.value(n.inputs()[0]);
      if (x.spec.rank() != 4) return "upsample on a non-4-D tensor";
      if (op == "aten::upsample_bilinear2d.vec" && !n.arg("scale_factors").is_none()) {
        const auto& sf = n.arg("scale_factors").get<std::vector<double>>();
        for (size_t i = 0; i < sf.size() && i < 2; ++i) {
          if (double(x.spec.sizes[2 + i]) * sf[i] != double(os.sizes[2 + i])) return "upsample with a non-integral scale factor";
        }
      }
      return {};
    }
    case Kind::kConvert:
      return "dtype conversions are not delegated (fp32 path)";
    default:
      return op + " is not among the operators this XNNPACK snapshot runs";
  }
}

// ---- cost rule ----

double node_flops(const Graph& g, const Node& n) {
  const OpInfo info = info_of(n);
  const TensorSpec& out = g.value(n.outputs[0]).spec;
  const double o = double(out.numel());
  switch (info.kind) {
    case Kind::kConv: {
      const auto& w = input_value(g, n, "weight").spec.sizes;
      return 2.0 * o * double(w[1] * w[2] * w[3]);
    }
    case Kind::kLinear:
      return 2.0 * o * double(input_value(g, n, "weight").spec.sizes[1]);
    case Kind::kAddmm:
    case Kind::kMm:
      return 2.0 * o * double(input_value(g, n, "mat2").spec.sizes[0]);
    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      const auto k = int_list(n, "kernel_size");
      return o * double(pair_at(k, 0, 1) * pair_at(k, 1, 1));
    }
    case Kind::kGlobalPool:
      return double(input_value(g, n, "self").spec.numel());
    case Kind::kReshape:
      return 0.0;
    default:
      return o;
  }
}

bool is_heavy(const Node& n) {
  switch (info_of(n).kind) {
    case Kind::kConv:
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm:
    case Kind::kMaxPool:
    case Kind::kAvgPool:
    case Kind::kGlobalPool:
      return true;
    default:
      return false;
  }
}

// ---- lowering ----

class Lowering {
 public:
  Lowering(const Graph& g, const Region& r) : g_(g), r_(r) {}

  LoweredRegion run() {
    LoweredRegion result;
    std::unordered_set<ValueId> region_outputs(r_.outputs.begin(), r_.outputs.end());
    std::unordered_set<NodeId> members(r_.nodes.begin(), r_.nodes.end());
    // Clamps fused into the producer: the producer writes the clamp's output tensor.
    for (NodeId id : r_.nodes) {
      const Node& n = g_.node(id);
      if (info_of(n).kind != Kind::kClampLike) continue;
      const Value& x = g_.value(n.inputs()[0]);
      if (!x.is_intermediate() || !members.count(x.producer) || skipped_.count(x.producer)) continue;
      const Node& p = g_.node(x.producer);
      if (!takes_output_range(p) || x.users.size() != 1 || region_outputs.count(x.id) || ranges_.count(p.id)) continue;
      const OutputRange c = clamp_range(n);
      ranges_[p.id] = c;
      alias_[x.id] = n.outputs[0];
      skipped_.insert(id);
    }
    plan_quantized_nodes(members, region_outputs);
    for (size_t i = 0; i < r_.inputs.size(); ++i) {
      const TensorSpec& s = g_.value(r_.inputs[i]).spec;
      TensorId t;
      if (s.dtype == ScalarType::Char) {  // an int8 activation: its dequantize says the scale
        const Node* dq = nullptr;
        for (NodeId u : g_.value(r_.inputs[i]).users) {
          if (members.count(u) && is_op(g_.node(u), kDequantize)) dq = &g_.node(u);
        }
        if (!dq) throw std::runtime_error("int8 input without a dequantize");
        const QuantInfo q = quant_of(g_, *dq);
        t = b_.add_tensor(DType::kQInt8, xnn_dims(s), Quant::per_tensor(q.scales[0], q.zero_points[0]));
      } else {
        t = b_.add_tensor(DType::kFloat32, xnn_dims(s));
      }
      const std::vector<uint8_t> order = s.rank() == 4 ? kChannelsLast : std::vector<uint8_t>{};
      b_.mark_external(t, ExternalKind::kInput, uint32_t(i), order);
      ids_[r_.inputs[i]] = t;
      result.input_dim_orders.push_back(order.empty() ? compiler::ir::identity_dim_order(s.rank()) : order);
    }
    for (NodeId id : r_.nodes) {
      if (skipped_.count(id)) continue;
      const Node& n = g_.node(id);
      emit(n);
    }
    for (size_t j = 0; j < r_.outputs.size(); ++j) {
      const ValueId v = r_.outputs[j];
      const TensorSpec& s = g_.value(v).spec;
      if (!ids_.count(v) && qalias_.count(v)) in(v);  // a dequantized output: Convert to fp32
      auto it = ids_.find(v);
      if (it == ids_.end()) throw std::runtime_error("region output '" + g_.value(v).name + "' was not computed");
      const std::vector<uint8_t> order = s.rank() == 4 ? kChannelsLast : std::vector<uint8_t>{};
      b_.mark_external(it->second, ExternalKind::kOutput, uint32_t(r_.inputs.size() + j), order);
      result.output_dim_orders.push_back(order.empty() ? compiler::ir::identity_dim_order(s.rank()) : order);
    }
    b_.set_num_args(uint32_t(r_.inputs.size() + r_.outputs.size()));
    if (std::string why = b_.validate(); !why.empty()) {
      result.reason = "XNNPACK refused the region: " + why;
      return result;
    }
    result.payload = b_.build();
    result.ok = true;
    return result;
  }

 private:
  TensorId in(ValueId v) {
    if (quant_mode_) {  // a quantized node reads the int8 tensor its input was dequantized from
      auto q = qalias_.find(v);
      if (q == qalias_.end()) throw std::runtime_error("quantized node input is not dequantized int8");
      return ids_.at(q->second);
    }
    auto it = ids_.find(v);
    if (it != ids_.end()) return it->second;
    if (auto q = qalias_.find(v); q != qalias_.end()) {
      // An fp32 reader of a dequantized activation: convert once, inside the delegate.
      const TensorId t = b_.add_tensor(DType::kFloat32, xnn_dims(g_.value(v).spec));
      b_.add_node(Unary{UnaryOp::kConvert}, {ids_.at(q->second)}, {t});
      ids_[v] = t;
      return t;
    }
    if (!is_static(g_, v)) throw std::runtime_error("value '" + g_.value(v).name + "' is read before it is computed");
    return constant_operand(v, g_.value(v).spec.rank());
  }

  // The tensor a node output is written to (the fused clamp's output when there is one).
  TensorId out(ValueId v) {
    if (quant_mode_) return quant_out_;
    ValueId target = v;
    if (auto it = alias_.find(v); it != alias_.end()) target = it->second;
    const TensorId t = b_.add_tensor(DType::kFloat32, xnn_dims(g_.value(target).spec));
    ids_[target] = t;
    return t;
  }

  // A constant used as a same-rank-as-output operand: rank-extended to `rank`, NHWC if 4-D.
  TensorId constant_operand(ValueId v, size_t rank) {
    const Value& value = g_.value(v);
    std::vector<float> data = static_floats(g_, v);
    std::vector<int64_t> sizes = value.spec.sizes;
    return float_constant(std::move(data), std::move(sizes), rank);
  }

  TensorId float_constant(std::vector<float> data, std::vector<int64_t> sizes, size_t rank) {
    while (sizes.size() < rank) sizes.insert(sizes.begin(), 1);
    if (sizes.size() == 4) {
      data = permute(data, sizes, {0, 2, 3, 1});
      sizes = {sizes[0], sizes[2], sizes[3], sizes[1]};
    }
    if (sizes.empty()) sizes = {1};
    std::vector<uint32_t> dims(sizes.begin(), sizes.end());
    return b_.add_constant(DType::kFloat32, dims, std::span<const float>(data));
  }

  OutputRange range_of(const Node& n) const {
    auto it = ranges_.find(n.id);
    return it == ranges_.end() ? OutputRange{} : it->second;
  }

  void add(const Node& n, const NodeAttrs& attrs, std::vector<TensorId> inputs, TensorId output) {
    b_.add_node(attrs, std::move(inputs), {output}, range_of(n));
  }

  void emit(const Node& n) {
    if (is_op(n, kDequantizeChannel) || (is_op(n, kDequantize) && weight_dequantize(g_, n.outputs[0]))) {
      return;  // a quantized weight: its readers take it as a constant
    }
    if (is_op(n, kDequantize)) {
      qalias_[n.outputs[0]] = n.arg("input").tensor();
      return;
    }
    if (is_op(n, kQuantize)) {
      if (written_by_op_.count(n.id)) return;
      const ValueId u = n.outputs[0];
      const QuantInfo q = quant_of(g_, n);
      const TensorId t = b_.add_tensor(DType::kQInt8, xnn_dims(g_.value(u).spec),
                                       Quant::per_tensor(q.scales[0], q.zero_points[0]));
      b_.add_node(Unary{UnaryOp::kConvert}, {in(n.arg("input").tensor())}, {t});
      ids_[u] = t;
      return;
    }
    if (auto it = quantized_.find(n.id); it != quantized_.end()) {
      const Node& q = g_.node(it->second);
      const QuantInfo qi = quant_of(g_, q);
      const ValueId u = q.outputs[0];
      quant_out_ = b_.add_tensor(DType::kQInt8, xnn_dims(g_.value(u).spec),
                                 Quant::per_tensor(qi.scales[0], qi.zero_points[0]));
      quant_out_params_ = qi;
      ids_[u] = quant_out_;
      quant_mode_ = true;
      emit_float_or_quantized(n);
      quant_mode_ = false;
      return;
    }
    emit_float_or_quantized(n);
  }

  // Decides which nodes run in int8: a PT2E dq -> op -> q pattern whose op XNNPACK runs in
  // qint8 (conv and linear with int8 weights of zero point 0, add/sub/mul, max pool and clamp
  // with equal input and output quantization, global average pool, reshape). The op then reads
  // the int8 tensors and writes the quantize's output; everything else stays fp32, with
  // Convert nodes at the dequantize/quantize points.
  void plan_quantized_nodes(const std::unordered_set<NodeId>& members,
                            const std::unordered_set<ValueId>& region_outputs) {
    const auto act_dq = [&](ValueId v) -> const Node* {
      const Value& value = g_.value(v);
      if (!value.is_intermediate() || !members.count(value.producer)) return nullptr;
      const Node& p = g_.node(value.producer);
      if (!is_op(p, kDequantize) || weight_dequantize(g_, v)) return nullptr;
      return &p;
    };
    for (NodeId id : r_.nodes) {
      if (skipped_.count(id)) continue;
      const Node& n = g_.node(id);
      const OpInfo info = info_of(n);
      std::vector<ValueId> acts;
      switch (info.kind) {
        case Kind::kConv: acts = {n.arg("input").tensor()}; break;
        case Kind::kLinear: acts = {n.arg("input").tensor()}; break;
        case Kind::kBinary:
          if (info.scalar_other || (info.binary != BinaryOp::kAdd && info.binary != BinaryOp::kSubtract &&
                                    info.binary != BinaryOp::kMultiply)) continue;
          if (n.op.name != "mul" && n.arg("alpha").to_double() != 1.0) continue;
          acts = {n.arg("self").tensor(), n.arg("other").tensor()};
          break;
        case Kind::kMaxPool:
        case Kind::kGlobalPool:
        case Kind::kClampLike:
        case Kind::kReshape:
          acts = {n.inputs()[0]};
          break;
        default:
          continue;
      }
      std::vector<const Node*> dqs;
      for (ValueId a : acts) dqs.push_back(act_dq(a));
      if (std::find(dqs.begin(), dqs.end(), nullptr) != dqs.end()) continue;
      ValueId final_out = n.outputs[0];
      if (auto it = alias_.find(final_out); it != alias_.end()) final_out = it->second;
      const Value& fo = g_.value(final_out);
      if (fo.users.size() != 1 || region_outputs.count(final_out) || !members.count(fo.users[0])) continue;
      const Node& q = g_.node(fo.users[0]);
      if (!is_op(q, kQuantize)) continue;
      const QuantInfo qo = quant_of(g_, q), qi = quant_of(g_, *dqs[0]);
      const bool same = qo.scales[0] == qi.scales[0] && qo.zero_points[0] == qi.zero_points[0];
      if (info.kind == Kind::kReshape && !reshape_reason(g_.value(acts[0]).spec.sizes, fo.spec.sizes).empty()) continue;
      if ((info.kind == Kind::kMaxPool || info.kind == Kind::kClampLike || info.kind == Kind::kReshape) && !same) continue;
      if (info.kind == Kind::kConv || info.kind == Kind::kLinear) {
        const Node* wdq = weight_dequantize(g_, n.arg("weight").tensor());
        if (!wdq || g_.value(wdq->arg("input").tensor()).spec.dtype != ScalarType::Char) continue;
        const QuantInfo wq = quant_of(g_, *wdq);
        if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int32_t z) { return z != 0; })) continue;
        if (!n.arg("bias").is_none() && !g_.value(n.arg("bias").tensor()).is_constant()) continue;
      }
      quantized_[id] = q.id;
      written_by_op_.insert(q.id);
    }
  }

  void emit_float_or_quantized(const Node& n) {
    const OpInfo info = info_of(n);
    const ValueId y = n.outputs[0];
    const TensorSpec& os = g_.value(y).spec;
    switch (info.kind) {
      case Kind::kConv:
        return emit_conv(n);
      case Kind::kLinear:
      case Kind::kAddmm:
      case Kind::kMm:
        return emit_linear(n, info.kind);
      case Kind::kBinary: {
        const TensorId a = operand(n.arg("self").tensor(), os.rank());
        TensorId c;
        if (info.scalar_other) {
          double other = n.arg("other").to_double();
          if (n.op.name == "add" || n.op.name == "sub") other *= n.arg("alpha").to_double();
          c = float_constant({float(other)}, {}, 0);
        } else if (n.op.name == "add" || n.op.name == "sub") {
          const double alpha = n.arg("alpha").to_double();
          const Value& o = g_.value(n.arg("other").tensor());
          if (alpha != 1.0) {
            std::vector<float> data = read_floats(o);
            for (float& f : data) f = float(f * alpha);
            c = float_constant(std::move(data), o.spec.sizes, os.rank());
          } else {
            c = operand(o.id, os.rank());
          }
        } else {
          c = operand(n.arg("other").tensor(), os.rank());
        }
        return add(n, Binary{info.binary}, {a, c}, out(y));
      }
      case Kind::kClampLike: {
        const OutputRange r = clamp_range(n);
        return b_.add_node(Clamp{r.min, r.max}, {in(n.inputs()[0])}, {out(y)}, r), void();
      }
      case Kind::kUnary:
        return add(n, Unary{info.unary}, {in(n.inputs()[0])}, out(y));
      case Kind::kSquare:
        return add(n, Unary{UnaryOp::kSquare}, {in(n.inputs()[0])}, out(y));
      case Kind::kSoftmax:
        return add(n, Unary{UnaryOp::kSoftmax}, {in(n.inputs()[0])}, out(y));
      case Kind::kLeakyRelu:
        return add(n, LeakyRelu{float(n.arg("negative_slope").to_double())}, {in(n.inputs()[0])}, out(y));
      case Kind::kElu:
        return add(n, Elu{float(n.arg("alpha").to_double())}, {in(n.inputs()[0])}, out(y));
      case Kind::kMaxPool:
      case Kind::kAvgPool:
        return emit_pool(n, info.kind);
      case Kind::kGlobalPool: {
        const TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
        const TensorId x = in(n.arg("self").tensor());
        if (os.rank() == 4) return add(n, GlobalAvgPool2d{}, {x}, out(y));
        const std::vector<uint32_t> pooled_dims = {uint32_t(xs.sizes[0]), 1, 1, uint32_t(xs.sizes[1])};
        const TensorId pooled = quant_mode_ ? b_.add_tensor(DType::kQInt8, pooled_dims,
                                                            Quant::per_tensor(quant_out_params_.scales[0],
                                                                              quant_out_params_.zero_points[0]))
                                            : b_.add_tensor(DType::kFloat32, pooled_dims);
        add(n, GlobalAvgPool2d{}, {x}, pooled);
        const std::vector<uint32_t> dims = xnn_dims(os);
        return b_.add_node(StaticReshape{dims}, {pooled}, {out(y)}), void();
      }
      case Kind::kPad: {
        const TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
        const auto pad = int_list(n, "pad");
        const size_t r = xs.rank();
        std::vector<uint32_t> pre(r, 0), post(r, 0);
        for (size_t i = 0; i < pad.size() / 2; ++i) {
          pre[r - 1 - i] = uint32_t(pad[2 * i]);
          post[r - 1 - i] = uint32_t(pad[2 * i + 1]);
        }
        if (r == 4) {
          pre = {pre[0], pre[2], pre[3], pre[1]};
          post = {post[0], post[2], post[3], post[1]};
        }
        ConstantPad attrs{pre, post, float(n.arg("value").to_double())};
        return add(n, attrs, {in(n.arg("self").tensor())}, out(y));
      }
      case Kind::kReshape: {
        const TensorSpec& xs = g_.value(n.inputs()[0]).spec;
        if (!reshape_reason(xs.sizes, os.sizes).empty()) {
          // A flatten into linear layers (check_node): the output holds (h, w, c) order.
          if (r_outputs_.count(y)) throw std::runtime_error("an NHWC flatten leaves the region");
          flattened_nhwc_[y] = {xs.sizes[1], xs.sizes[2], xs.sizes[3]};
        }
        return add(n, StaticReshape{xnn_dims(os)}, {in(n.inputs()[0])}, out(y));
      }
      case Kind::kResize: {
        const bool align = n.arg("align_corners").get<bool>();
        ResizeBilinear2d attrs{uint32_t(os.sizes[2]), uint32_t(os.sizes[3]), align, false};
        return add(n, attrs, {in(n.inputs()[0])}, out(y));
      }
      default:
        throw std::runtime_error(n.op.str() + " has no XNNPACK lowering");
    }
  }

  // A binary operand: an activation as it is, a constant rank-extended (NHWC when 4-D).
  TensorId operand(ValueId v, size_t out_rank) {
    if (!quant_mode_ && ids_.count(v)) return ids_[v];
    if (!quant_mode_ && is_static(g_, v) && !qalias_.count(v)) return constant_operand(v, out_rank);
    return in(v);
  }

  void emit_conv(const Node& n) {
    const Value& x = g_.value(n.arg("input").tensor());
    const Value& w = g_.value(n.arg("weight").tensor());
    const auto& ws = w.spec.sizes;  // [OC, IC / groups, KH, KW]
    const auto stride = int_list(n, "stride"), padding = int_list(n, "padding"),
               dilation = int_list(n, "dilation");
    const uint32_t groups = uint32_t(n.arg("groups").to_int());
    Conv2d c;
    c.kernel_height = uint32_t(ws[2]);
    c.kernel_width = uint32_t(ws[3]);
    c.stride_height = uint32_t(pair_at(stride, 0, 1));
    c.stride_width = uint32_t(pair_at(stride, 1, 1));
    c.dilation_height = uint32_t(pair_at(dilation, 0, 1));
    c.dilation_width = uint32_t(pair_at(dilation, 1, 1));
    c.groups = groups;
    c.group_input_channels = uint32_t(x.spec.sizes[1] / groups);
    c.group_output_channels = uint32_t(ws[0] / groups);
    c.padding = Padding::symmetric(uint32_t(pair_at(padding, 0, 0)), uint32_t(pair_at(padding, 1, 0)));
    if (quant_mode_) {
      const auto [filter, bias] = quantized_weights(n, x.id, /*conv_layout=*/true);
      return add(n, c, {in(x.id), filter, bias}, out(n.outputs[0]));
    }
    const std::vector<float> wdata = permute(static_floats(g_, w.id), ws, {0, 2, 3, 1});
    const TensorId filter = b_.add_constant(DType::kFloat32, {uint32_t(ws[0]), uint32_t(ws[2]), uint32_t(ws[3]), uint32_t(ws[1])},
                                            std::span<const float>(wdata));
    std::vector<TensorId> inputs = {in(x.id), filter};
    if (!n.arg("bias").is_none()) {
      const std::vector<float> bias = read_floats(g_.value(n.arg("bias").tensor()));
      inputs.push_back(b_.add_constant(DType::kFloat32, {uint32_t(bias.size())}, std::span<const float>(bias)));
    }
    add(n, c, inputs, out(n.outputs[0]));
  }

  // int8 filter and int32 bias of a quantized conv or linear: per-channel weights (QCInt8,
  // channel_dim 0) with a QCInt32 bias, or per-tensor QInt8 with QInt32. Conv filters are
  // rearranged to [OC, KH, KW, IC/g]; a linear weight [out, in] becomes a 1x1 conv filter
  // [out, 1, 1, in] when `conv_layout` (per-channel linear runs as a 1x1 conv).
  std::pair<TensorId, TensorId> quantized_weights(const Node& n, ValueId x, bool conv_layout) {
    const Node& wdq = *weight_dequantize(g_, n.arg("weight").tensor());
    const Value& w = g_.value(wdq.arg("input").tensor());
    const QuantInfo wq = quant_of(g_, wdq);
    const QuantInfo xq = quant_of(g_, g_.node(g_.value(x).producer));
    const std::vector<double> raw = read_numbers(w);
    std::vector<int8_t> wdata(raw.begin(), raw.end());
    std::vector<int64_t> ws = w.spec.sizes;
    if (ws.size() == 4) {
      wdata = permute(wdata, ws, {0, 2, 3, 1});
      ws = {ws[0], ws[2], ws[3], ws[1]};
    } else if (conv_layout) {
      ws = {ws[0], 1, 1, ws[1]};
    }
    const std::vector<uint32_t> wdims(ws.begin(), ws.end());
    const size_t oc = size_t(ws[0]);
    std::vector<float> bias(oc, 0.0f);
    if (!n.arg("bias").is_none()) bias = read_floats(g_.value(n.arg("bias").tensor()));
    const bool per_channel = wq.axis >= 0 && wq.scales.size() == oc;
    std::vector<float> bias_scales(oc);
    std::vector<int32_t> qbias(oc);
    for (size_t c = 0; c < oc; ++c) {
      bias_scales[c] = xq.scales[0] * wq.scales[per_channel ? c : 0];
      qbias[c] = int32_t(std::lrint(double(bias[c]) / double(bias_scales[c])));
    }
    if (per_channel) {
      const TensorId f = b_.add_constant(DType::kQCInt8, wdims, std::span<const int8_t>(wdata), Quant::per_channel(wq.scales, 0));
      const TensorId b = b_.add_constant(DType::kQCInt32, {uint32_t(oc)}, std::span<const int32_t>(qbias),
                                         Quant::per_channel(bias_scales, 0));
      return {f, b};
    }
    const TensorId f = b_.add_constant(DType::kQInt8, wdims, std::span<const int8_t>(wdata), Quant::per_tensor(wq.scales[0], 0));
    const TensorId b = b_.add_constant(DType::kQInt32, {uint32_t(oc)}, std::span<const int32_t>(qbias),
                                       Quant::per_tensor(bias_scales[0], 0));
    return {f, b};
  }

  // A quantized linear: FullyConnected with per-tensor weights; per-channel weights as a 1x1
  // Conv2d over [M, 1, 1, in] (this XNNPACK has no per-channel FullyConnected).
  void emit_quantized_linear(const Node& n) {
    const ValueId x = n.arg("input").tensor();
    const Node& wdq = *weight_dequantize(g_, n.arg("weight").tensor());
    const bool per_channel = is_op(wdq, kDequantizeChannel) && quant_of(g_, wdq).scales.size() > 1;
    if (!per_channel) {
      const auto [f, b] = quantized_weights(n, x, false);
      return add(n, FullyConnected{}, {in(x), f, b}, out(n.outputs[0]));
    }
    const auto [f, b] = quantized_weights(n, x, true);
    const TensorSpec& xs = g_.value(x).spec;
    const uint32_t k = uint32_t(xs.sizes.back()), m = uint32_t(xs.numel() / xs.sizes.back());
    const uint32_t oc = uint32_t(g_.value(wdq.arg("input").tensor()).spec.sizes[0]);
    const QuantInfo xq = quant_of(g_, g_.node(g_.value(x).producer));
    const TensorId x4 = b_.add_tensor(DType::kQInt8, {m, 1, 1, k}, Quant::per_tensor(xq.scales[0], xq.zero_points[0]));
    b_.add_node(StaticReshape{{m, 1, 1, k}}, {in(x)}, {x4});
    const TensorId y4 = b_.add_tensor(DType::kQInt8, {m, 1, 1, oc},
                                      Quant::per_tensor(quant_out_params_.scales[0], quant_out_params_.zero_points[0]));
    Conv2d c;
    c.group_input_channels = k;
    c.group_output_channels = oc;
    add(n, c, {x4, f, b}, y4);
    b_.add_node(StaticReshape{xnn_dims(g_.value(n.outputs[0]).spec)}, {y4}, {out(n.outputs[0])});
  }

  void emit_linear(const Node& n, Kind kind) {
    if (quant_mode_) return emit_quantized_linear(n);
    const char* in_name = kind == Kind::kLinear ? "input" : (kind == Kind::kAddmm ? "mat1" : "self");
    const char* w_name = kind == Kind::kLinear ? "weight" : "mat2";
    const Value& w = g_.value(n.arg(w_name).tensor());
    std::vector<float> wdata = static_floats(g_, w.id);
    if (auto it = flattened_nhwc_.find(n.arg(in_name).tensor()); it != flattened_nhwc_.end()) {
      // The input is flattened in (h, w, c) order: reorder the weight's input columns to match.
      const auto [c, h, wd] = it->second;
      const bool transposed = kind != Kind::kLinear;  // [in, out]
      const int64_t outs = transposed ? w.spec.sizes[1] : w.spec.sizes[0];
      std::vector<float> reordered(wdata.size());
      for (int64_t o = 0; o < outs; ++o) {
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t p = 0; p < h * wd; ++p) {
            const int64_t from = ci * h * wd + p, to = p * c + ci;
            if (transposed) reordered[size_t(to * outs + o)] = wdata[size_t(from * outs + o)];
            else reordered[size_t(o * c * h * wd + to)] = wdata[size_t(o * c * h * wd + from)];
          }
        }
      }
      wdata = std::move(reordered);
    }
    const std::vector<uint32_t> wdims(w.spec.sizes.begin(), w.spec.sizes.end());
    FullyConnected fc;
    fc.transpose_weights = kind != Kind::kLinear;  // mm/addmm weights are [in, out]
    std::vector<TensorId> inputs = {in(n.arg(in_name).tensor()),
                                    b_.add_constant(DType::kFloat32, wdims, std::span<const float>(wdata))};
    const char* bias_name = kind == Kind::kLinear ? "bias" : (kind == Kind::kAddmm ? "self" : nullptr);
    if (bias_name && !n.arg(bias_name).is_none()) {
      const std::vector<float> bias = read_floats(g_.value(n.arg(bias_name).tensor()));
      inputs.push_back(b_.add_constant(DType::kFloat32, {uint32_t(bias.size())}, std::span<const float>(bias)));
    }
    add(n, fc, inputs, out(n.outputs[0]));
  }

  void emit_pool(const Node& n, Kind kind) {
    const Value& x = g_.value(n.arg("self").tensor());
    const TensorSpec& os = g_.value(n.outputs[0]).spec;
    const auto k = int_list(n, "kernel_size"), s = int_list(n, "stride"), p = int_list(n, "padding");
    const uint32_t kh = uint32_t(pair_at(k, 0, 1)), kw = uint32_t(pair_at(k, 1, 1));
    const uint32_t sh = uint32_t(pair_at(s, 0, kh)), sw = uint32_t(pair_at(s, 1, kw));
    Padding pad = Padding::symmetric(uint32_t(pair_at(p, 0, 0)), uint32_t(pair_at(p, 1, 0)));
    if (kind == Kind::kAvgPool) {
      return add(n, AvgPool2d{kh, kw, sh, sw, pad, false}, {in(x.id)}, out(n.outputs[0]));
    }
    std::vector<int64_t> dil;
    if (n.schema && n.schema->arg_index("dilation") >= 0) dil = int_list(n, "dilation");
    const uint32_t dh = uint32_t(pair_at(dil, 0, 1)), dw = uint32_t(pair_at(dil, 1, 1));
    // ceil_mode: extra bottom/right padding gives the ceil-mode output size (max ignores pads).
    const auto extra = [&](int64_t in, uint32_t lo, uint32_t hi, uint32_t kk, uint32_t st, uint32_t d, int64_t want) -> uint32_t {
      const int64_t span = int64_t(d) * (kk - 1) + 1;
      const int64_t have = (in + lo + hi - span) / st + 1;
      return want > have ? uint32_t((want - 1) * st + span - (in + lo + hi)) : 0;
    };
    pad.bottom += extra(x.spec.sizes[2], pad.top, pad.bottom, kh, sh, dh, os.sizes[2]);
    pad.right += extra(x.spec.sizes[3], pad.left, pad.right, kw, sw, dw, os.sizes[3]);
    MaxPool2d attrs{kh, kw, sh, sw, dh, dw, pad, false};
    add(n, attrs, {in(x.id)}, out(n.outputs[0]));
  }

  const Graph& g_;
  const Region& r_;
  PayloadBuilder b_;
  std::unordered_map<ValueId, TensorId> ids_;
  std::unordered_map<ValueId, ValueId> alias_;
  std::unordered_map<NodeId, OutputRange> ranges_;
  std::unordered_set<NodeId> skipped_;
  // int8: dequantized activation -> the int8 value it came from; op node -> its quantize node.
  std::unordered_map<ValueId, ValueId> qalias_;
  std::unordered_map<NodeId, NodeId> quantized_;
  std::unordered_set<NodeId> written_by_op_;
  bool quant_mode_ = false;
  TensorId quant_out_ = 0;
  QuantInfo quant_out_params_;
  std::unordered_set<ValueId> r_outputs_{r_.outputs.begin(), r_.outputs.end()};
  // Values flattened from NHWC [N, H, W, C] -> [N, H*W*C]: their (C, H, W).
  std::unordered_map<ValueId, std::tuple<int64_t, int64_t, int64_t>> flattened_nhwc_;
};

const bool g_registered = compiler::register_partitioner(
    "xnnpack", [] { return std::make_unique<XnnpackPartitioner>(); });

}  // namespace

SupportDecision XnnpackPartitioner::supports(const Graph& graph, const Node& node) const {
  try {
    const std::string why = check_node(graph, node);
    return why.empty() ? SupportDecision::yes() : SupportDecision::no(why);
  } catch (const std::exception& e) {
    return SupportDecision::no(std::string("cannot read the node: ") + e.what());
  }
}

SupportDecision XnnpackPartitioner::worth_delegating(const Graph& graph, const Region& region) const {
  double flops = 0.0;
  bool heavy = false;
  for (NodeId n : region.nodes) {
    const Node& node = graph.node(n);
    heavy = heavy || is_heavy(node);
    flops += node_flops(graph, node);
  }
  if (heavy) return SupportDecision::yes();
  double bytes = 0.0;
  for (ValueId v : region.inputs) bytes += double(graph.value(v).spec.nbytes());
  for (ValueId v : region.outputs) bytes += double(graph.value(v).spec.nbytes());
  if (bytes == 0.0 || flops / bytes >= kMinFlopsPerBoundaryByte) return SupportDecision::yes();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "region of %zu node(s) without conv, linear or pool does %.0f FLOPs for %.0f boundary "
                "bytes (%.2f FLOPs/byte < %.1f): cheaper on the kernels",
                region.nodes.size(), flops, bytes, flops / bytes, kMinFlopsPerBoundaryByte);
  return SupportDecision::no(buf);
}

LoweredRegion XnnpackPartitioner::lower(const Graph& graph, const Region& region) const {
  try {
    return Lowering(graph, region).run();
  } catch (const std::exception& e) {
    LoweredRegion failed;
    failed.reason = std::string("XNNPACK lowering failed: ") + e.what();
    return failed;
  }
}

bool xnnpack_partitioner_registered() { return g_registered; }

}  // namespace pteron::xnnpack
