#include "kernels/cortex_m/aot/lower_cortex_m.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "compiler/passes/activation_bounds.h"
#include "compiler/passes/passes.h"
#include "compiler/target/target.h"
#include "kernels/cortex_m/aot/cortex_m_schemas.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "kernels/cortex_m/util/requantize.h"

namespace pteron::cortex_m::aot {
namespace {

namespace ir = compiler::ir;
using compiler::activation_bounds;
using ir::Argument;
using ir::Graph;
using ir::NewValue;
using ir::Node;
using ir::NodeId;
using ir::TensorRef;
using ir::TensorSpec;
using ir::ValueId;

constexpr std::string_view kQuant = "quantized_decomposed::quantize_per_tensor.default";
constexpr std::string_view kDequant = "quantized_decomposed::dequantize_per_tensor.default";
constexpr std::string_view kDequantChannel = "quantized_decomposed::dequantize_per_channel.default";

struct QParams {
  double scale = 1;
  int64_t zp = 0;
  int64_t qmin = -128, qmax = 127;
};

bool same_qparams(const QParams& a, const QParams& b) {
  return a.zp == b.zp && std::fabs(a.scale - b.scale) <= 1e-6 * std::max(a.scale, b.scale);
}

// qparams of a per-tensor int8 quantize/dequantize node.
std::optional<QParams> per_tensor_qparams(const Node& n) {
  if (n.args.size() < 6 || !n.args[1].is<double>() || !n.args[2].is<int64_t>()) return {};
  if (!n.args[5].is<ScalarType>() || n.args[5].get<ScalarType>() != ScalarType::Char) return {};
  QParams p{n.args[1].get<double>(), n.args[2].get<int64_t>(), n.args[3].get<int64_t>(),
            n.args[4].get<int64_t>()};
  if (!(p.scale > 0) || !std::isfinite(p.scale) || p.zp < -128 || p.zp > 127 || p.qmin < -128 ||
      p.qmax > 127 || p.qmin > p.qmax) {
    return {};
  }
  return p;
}

bool is_op(const Node& n, std::string_view name) { return n.op.str() == name; }

// A reshape: view (emitted as view_copy) or view_copy, whose int8 form moves bytes unchanged.
bool is_view(const Node& n) {
  const std::string op = n.op.str();
  return (op == "aten::view.default" || op == "aten::view_copy.default") && n.schema != nullptr;
}

// An int8 activation: the input of the per-tensor dequantize that produced `v`.
struct QuantInput {
  ValueId q = ir::kNoValue;
  QParams p;
};
std::optional<QuantInput> dequantized(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return {};
  const Node& dq = g.node(value.producer);
  if (!is_op(dq, kDequant)) return {};
  if (dq.args.size() > 6 && !dq.args[6].is_none() &&
      !(dq.args[6].is<ScalarType>() && dq.args[6].get<ScalarType>() == ScalarType::Float)) {
    return {};
  }
  auto p = per_tensor_qparams(dq);
  const ValueId q = dq.args[0].tensor();
  if (!p || g.value(q).spec.dtype != ScalarType::Char) return {};
  return QuantInput{q, *p};
}

// The quantize that takes `node`'s result, possibly through a fusable activation.
struct QuantOutput {
  NodeId quant = ir::kNoNode;
  QParams p;
  int64_t act_min = -128, act_max = 127;
};

int64_t quantize_bound(double x, const QParams& p) {
  const double q = std::nearbyint(x / p.scale) + static_cast<double>(p.zp);
  return static_cast<int64_t>(
      std::clamp(q, static_cast<double>(p.qmin), static_cast<double>(p.qmax)));
}

// The single user of `v`, if `v` is not a graph output.
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

// ---- constants ---------------------------------------------------------------------------

template <typename T>
std::vector<T> read_constant(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  const auto& bytes = value.constant->bytes;
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// A float/double/int constant as doubles (scales, zero points, float biases).
std::optional<std::vector<double>> constant_as_doubles(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_constant() || !value.spec.is_contiguous()) return {};
  std::vector<double> out;
  switch (value.spec.dtype) {
    case ScalarType::Float:
      for (float x : read_constant<float>(g, v)) out.push_back(x);
      return out;
    case ScalarType::Double:
      return read_constant<double>(g, v);
    case ScalarType::Long:
      for (int64_t x : read_constant<int64_t>(g, v)) out.push_back(static_cast<double>(x));
      return out;
    case ScalarType::Int:
      for (int32_t x : read_constant<int32_t>(g, v)) out.push_back(x);
      return out;
    default:
      return {};
  }
}

struct QuantWeight {
  std::vector<int8_t> data;  // as the float op's weight is laid out (contiguous)
  std::vector<int64_t> sizes;
  std::vector<double> scales;  // one per output channel (dim 0)
  int64_t zp = 0;              // per-tensor weights only; per-channel must be symmetric
};

// A weight given as dequantize(int8 constant), per tensor or per channel on axis 0.
std::optional<QuantWeight> quantized_weight(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return {};
  const Node& dq = g.node(value.producer);
  const ValueId wq = dq.args[0].tensor();
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
  if (dq.args[3].get<int64_t>() != 0 || dq.args[6].get<ScalarType>() != ScalarType::Char) return {};
  auto scales = constant_as_doubles(g, dq.args[1].tensor());
  if (!scales || static_cast<int64_t>(scales->size()) != channels) return {};
  if (!dq.args[2].is_none()) {
    auto zps = constant_as_doubles(g, dq.args[2].tensor());
    if (!zps) return {};
    for (double z : *zps)
      if (z != 0) return {};  // CMSIS-NN convolutions take symmetric weights
  }
  for (double s : *scales)
    if (!(s > 0) || !std::isfinite(s)) return {};
  out.scales = *scales;
  return out;
}

// int32 bias: a float constant scaled by input_scale * weight_scale[c], or dequantize(int32).
std::optional<std::vector<int32_t>> quantized_bias(const Graph& g, const Argument& arg,
                                                   double input_scale, const QuantWeight& w) {
  const size_t channels = w.scales.size();
  if (arg.is_none()) return std::vector<int32_t>();
  const ir::Value& value = g.value(arg.tensor());
  if (value.is_intermediate()) {
    const Node& dq = g.node(value.producer);
    if (!is_op(dq, kDequant) && !is_op(dq, kDequantChannel)) return {};
    const ir::Value& b = g.value(dq.args[0].tensor());
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

template <typename T>
ValueId add_constant(Graph& g, const std::string& base, ScalarType dtype,
                     std::vector<int64_t> sizes, const std::vector<T>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(T));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return g.add_constant(g.unique_name(base), TensorSpec::contiguous(dtype, std::move(sizes)),
                        ir::ConstantData::owned(std::move(bytes)));
}

// quantized_linear_packed's constants (util/linear_packed.h) for symmetric weights [N, K]:
// the weights interleaved four output rows at a time and zero-padded, and per group of four
// channels the kernel sums (bias + input_offset * sum_k w[n][k], so the kernel adds no offset
// term), multipliers and the shift split into its left and right parts. Nothing when a kernel
// sum does not fit int32 (quantized_linear then computes the offset terms at run time).
std::optional<std::pair<std::vector<int8_t>, std::vector<int32_t>>> packed_linear(
    const QuantWeight& w, const std::vector<int32_t>& bias, int64_t input_offset,
    const std::pair<std::vector<int32_t>, std::vector<int32_t>>& rq) {
  const int64_t n = w.sizes[0], k = w.sizes[1];
  const int64_t groups = linear_groups(n), chunks = linear_chunks(k);
  std::vector<int8_t> weights(static_cast<size_t>(groups * chunks * kLinearGroup * kLinearChunk));
  std::vector<int32_t> quant(static_cast<size_t>(groups * kLinearQuantFields * kLinearGroup));
  for (int64_t o = 0; o < n; ++o) {
    int64_t sum = bias.empty() ? 0 : bias[static_cast<size_t>(o)];
    for (int64_t i = 0; i < k; ++i) {
      const int8_t v = w.data[static_cast<size_t>(o * k + i)];
      weights[static_cast<size_t>(linear_packed_index(o, i, chunks))] = v;
      sum += input_offset * v;
    }
    if (sum < INT32_MIN || sum > INT32_MAX) return {};
    const int32_t shift = rq.second[static_cast<size_t>(o)];
    quant[static_cast<size_t>(linear_quant_index(o, kLinearKernelSum))] = static_cast<int32_t>(sum);
    quant[static_cast<size_t>(linear_quant_index(o, kLinearMultiplier))] =
        rq.first[static_cast<size_t>(o)];
    quant[static_cast<size_t>(linear_quant_index(o, kLinearLeftShift))] = std::max(shift, 0);
    quant[static_cast<size_t>(linear_quant_index(o, kLinearRightShift))] = std::min(shift, 0);
  }
  return std::make_pair(std::move(weights), std::move(quant));
}

// Per-channel requantisation of input_scale * weight_scale[c] / output_scale.
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

// ---- the rewriter ------------------------------------------------------------------------

std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return std::vector<int64_t>(v); }

std::vector<int64_t> pair_arg(const Argument& a, int64_t fill) {
  std::vector<int64_t> v =
      a.is<std::vector<int64_t>>() ? a.get<std::vector<int64_t>>() : std::vector<int64_t>{};
  if (v.empty()) return {fill, fill};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

// Whether the program's kernels will take their DSP paths: the target's core has the DSP
// extension and no MVE (Cortex-M4, M7). Otherwise (Cortex-M55, or no firmware target) the MVE
// paths' scratch is planned.
bool dsp_target() {
  const compiler::Target* t = compiler::compiling_target();
  if (t == nullptr) return false;
  bool dsp = false, mve = false;
  for (const std::string& f : t->cpu_features) {
    dsp = dsp || f == "dsp";
    mve = mve || f.rfind("mve", 0) == 0;
  }
  return dsp && !mve;
}

// The scratch the vector path of a cortex_m node asks for: which argument takes it and how many
// bytes (0: none, the node is no convolution or its vector path needs none).
struct NodeScratch {
  size_t arg = 0;
  size_t bytes = 0;
};
NodeScratch node_scratch(const compiler::ir::Graph& graph, const compiler::ir::Node& n) {
  const std::string op = n.op.str();
  const bool conv = op == "cortex_m::quantized_conv2d_nhwc.default";
  if (!conv && op != "cortex_m::quantized_depthwise_conv2d_nhwc.default") return {};
  const auto& in = graph.value(n.args[0].tensor()).spec.sizes;
  const auto& w = graph.value(n.args[1].tensor()).spec.sizes;
  if (!conv) {
    // Depth multiplier 1 only: the MVE path's per-channel data and one row of padding.
    if (w[3] != in[3]) return {};
    if (dsp_target()) return {13, quantized_depthwise_conv2d_scratch_bytes_dsp(w[3], w[1], w[2])};
    const auto& out = graph.value(n.outputs[0]).spec.sizes;
    return {13, quantized_depthwise_conv2d_scratch_bytes(w[3], in[2], out[2],
                                                         pair_arg(n.args[3], 1)[1])};
  }
  if (dsp_target()) return {12, quantized_conv2d_scratch_bytes_dsp(in[3], w[1], w[2], w[0])};
  const auto stride = pair_arg(n.args[3], 1), padding = pair_arg(n.args[4], 0);
  const bool pointwise = w[1] == 1 && w[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
                         padding[0] == 0 && padding[1] == 0;
  return {12, quantized_conv2d_scratch_bytes(in[3], w[1], w[2], w[0], pointwise, stride[1])};
}

class Lowering {
 public:
  Lowering(Graph& g, const std::unordered_set<NodeId>& delegated) : g_(g), delegated_(delegated) {}

  CortexMLoweringReport run() {
    register_cortex_m_schemas();
    report_.lowered += move_dequantize_past_views();
    const std::vector<NodeId> order = g_.nodes();
    for (NodeId id : order) {
      if (!g_.has_node(id)) continue;
      if (near_delegated(id)) continue;
      if (g_.is_dynamic_node(id)) continue;  // Cortex-M kernels are planned for static shapes
      const Node n = g_.node(id);            // a copy: adding nodes moves the graph's storage
      const std::string op = n.op.str();
      bool done = false;
      if (op == "aten::convolution.default" || op == "aten::conv2d.default") {
        done = conv(n);
      } else if (op == "aten::linear.default") {
        done = linear(n, n.args[0], n.args[1].tensor(), n.args[2]);
      } else if (op == "aten::addmm.default" || op == "aten::mm.default") {
        done = matmul(n);
      } else if (op == "aten::add.Tensor") {
        done = add(n);
      } else if (op == "aten::mul.Tensor") {
        done = mul(n);
      } else if (op == "aten::max_pool2d.default" ||
                 op == "aten::max_pool2d_with_indices.default") {
        done = max_pool(n);
      } else if (op == "aten::avg_pool2d.default" || op == "aten::adaptive_avg_pool2d.default" ||
                 op == "aten::_adaptive_avg_pool2d.default" || op == "aten::mean.dim") {
        done = avg_pool(n);
      } else if (op == "aten::_softmax.default" || op == "aten::softmax.int") {
        done = softmax(n);
      } else if (activation_bounds(n)) {
        done = clamp(n);
      } else if (op == "aten::permute.default" || op == "aten::permute_copy.default") {
        done = permute(n);
      } else if (op == "aten::constant_pad_nd.default") {
        done = pad(n);
      } else if (is_view(n)) {
        done = view(n);
      } else {
        continue;
      }
      if (done) {
        ++report_.lowered;
      } else if (!reason_.empty()) {
        report_.kept.push_back(n.describe() + ": " + reason_);
      }
      reason_.clear();
    }
    compiler::remove_dead_code(g_);
    fold_pads_into_convs();
    sink_transposes_through_elementwise();
    report_.transposes_removed = cancel_transposes();
    fold_requantize_pairs();
    report_.quant_ops = convert_quant_nodes();
    compiler::remove_dead_code(g_);
    plan_scratch();
    g_.metadata()["cortex_m.scratch_bytes"] = std::to_string(cortex_m_scratch_bytes(g_));
    g_.verify();
    return report_;
  }

 private:
  // True when `id` or a node within the Q/DQ pattern around it belongs to a delegate, whose
  // nodes and values the lowering must leave alone.
  bool near_delegated(NodeId id) const {
    if (delegated_.empty()) return false;
    if (delegated_.count(id)) return true;
    const Node& n = g_.node(id);
    for (ValueId v : n.inputs()) {
      const ir::Value& value = g_.value(v);
      if (value.is_intermediate() && delegated_.count(value.producer)) return true;
    }
    std::vector<NodeId> frontier = {id};
    for (int depth = 0; depth < 3; ++depth) {
      std::vector<NodeId> next;
      for (NodeId f : frontier)
        for (ValueId v : g_.node(f).outputs) {
          if (v == ir::kNoValue) continue;
          for (NodeId u : g_.value(v).users) {
            if (delegated_.count(u)) return true;
            next.push_back(u);
          }
        }
      frontier = std::move(next);
    }
    return false;
  }

  // Records why a quantized op stays float (only when it looked quantized).
  bool keep(std::string reason) {
    reason_ = std::move(reason);
    return false;
  }

  ValueId new_node(const char* name, std::vector<Argument> args, TensorSpec spec, const Node& from,
                   NodeId before) {
    const ir::OpSchema& schema = cortex_m_op(name);
    const NodeId id = g_.add_node(
        schema, std::move(args),
        {NewValue{g_.unique_name(from.debug.node_name.empty() ? std::string("cortex_m_") + name
                                                              : from.debug.node_name + "_q"),
                  std::move(spec)}},
        from.debug, before);
    return g_.node(id).outputs[0];
  }

  // Gives every convolution whose MVE path needs scratch (kernel sums, im2col columns, the
  // depthwise per-channel data and padding row) a cortex_m::scratch_buffer of that size (plus
  // alignment slack) as its scratch argument: the memory planner then places it in an arena,
  // alive for that one kernel, so the firmware allocates nothing at run time and the RAM budget
  // counts it. The scalar path ignores it.
  void plan_scratch() {
    const std::vector<NodeId> order = g_.nodes();
    for (NodeId id : order) {
      const Node& n = g_.node(id);
      const NodeScratch scratch = node_scratch(g_, n);
      if (scratch.bytes == 0 || !n.args[scratch.arg].is_none()) continue;
      const auto size = static_cast<int64_t>(scratch.bytes + kScratchAlign);
      const ValueId buffer = new_node("scratch_buffer", {Argument(size)}, int8_spec({size}), n, id);
      g_.set_arg(id, scratch.arg, TensorRef{buffer});
    }
  }

  // Points the users of the quantize at `result` (the int8 value now computed directly).
  void finish(const QuantOutput& out, ValueId result) {
    g_.replace_all_uses(g_.node(out.quant).outputs[0], result);
  }

  TensorSpec int8_spec(std::vector<int64_t> sizes) {
    return TensorSpec::contiguous(ScalarType::Char, std::move(sizes));
  }

  ValueId to_nhwc(ValueId x, const Node& from, NodeId before) {
    const std::vector<int64_t> s = g_.value(x).spec.sizes;
    return new_node("transpose", {TensorRef{x}, ints({0, 2, 3, 1})},
                    int8_spec({s[0], s[2], s[3], s[1]}), from, before);
  }
  ValueId to_nchw(ValueId x, const Node& from, NodeId before) {
    const std::vector<int64_t> s = g_.value(x).spec.sizes;
    return new_node("transpose", {TensorRef{x}, ints({0, 3, 1, 2})},
                    int8_spec({s[0], s[3], s[1], s[2]}), from, before);
  }

  bool conv(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, true);
    if (!out) return keep("output is not quantized per tensor to int8");
    const bool full = n.op.name == "convolution";
    if (full && n.args[6].get<bool>()) return keep("transposed convolution");
    const int64_t groups = n.args[full ? 8 : 6].get<int64_t>();
    auto w = quantized_weight(g_, n.args[1].tensor());
    if (!w || w->sizes.size() != 4) return keep("weight is not a dequantized int8 constant");
    if (w->zp != 0) return keep("weights are not symmetric (zero point != 0)");
    const std::vector<int64_t> in_sizes = g_.value(x->q).spec.sizes;
    if (in_sizes.size() != 4) return keep("input is not 4-D");
    const int64_t cin = in_sizes[1], cout = w->sizes[0], kh = w->sizes[2], kw = w->sizes[3];
    const bool depthwise = groups > 1 && groups == cin && w->sizes[1] == 1 && cout % cin == 0;
    if (groups != 1 && !depthwise) return keep("grouped convolution");
    auto bias = quantized_bias(g_, n.args[2], x->p.scale, *w);
    if (!bias) return keep("bias is not a float or int32 constant");
    auto rq = channel_requant(x->p.scale, w->scales, out->p.scale);
    if (!rq) return keep("requantisation scale out of range");
    const auto stride = pair_arg(n.args[3], 1), padding = pair_arg(n.args[4], 0),
               dilation = pair_arg(n.args[5], 1);

    // Weights in the kernels' layouts: OHWI, or [1, kH, kW, Cout] for depthwise.
    std::vector<int8_t> wt(w->data.size());
    const int64_t ci = w->sizes[1];
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t i = 0; i < ci; ++i)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t xx = 0; xx < kw; ++xx) {
            const int8_t v = w->data[((o * ci + i) * kh + y) * kw + xx];
            if (depthwise)
              wt[(y * kw + xx) * cout + o] = v;
            else
              wt[((o * kh + y) * kw + xx) * ci + i] = v;
          }
    const std::string base = n.debug.node_name.empty() ? "conv" : n.debug.node_name;
    const ValueId wv = add_constant(
        g_, base + "_weight_q", ScalarType::Char,
        depthwise ? std::vector<int64_t>{1, kh, kw, cout} : std::vector<int64_t>{cout, kh, kw, ci},
        wt);
    Argument bias_arg = ir::None{};
    if (!bias->empty())
      bias_arg = TensorRef{add_constant(g_, base + "_bias_q", ScalarType::Int, {cout}, *bias)};
    const ValueId mv = add_constant(g_, base + "_multipliers", ScalarType::Int, {cout}, rq->first);
    const ValueId sv = add_constant(g_, base + "_shifts", ScalarType::Int, {cout}, rq->second);

    const std::vector<int64_t> out_sizes = g_.value(g_.node(out->quant).outputs[0]).spec.sizes;
    const NodeId before = out->quant;
    const ValueId xin = to_nhwc(x->q, n, before);
    std::vector<Argument> args = {TensorRef{xin}, TensorRef{wv}, bias_arg,
                                  stride,         padding,       dilation};
    if (depthwise) args.push_back(cout / cin);
    args.insert(args.end(), {Argument(-x->p.zp), Argument(out->p.zp), Argument(TensorRef{mv}),
                             Argument(TensorRef{sv}), Argument(out->act_min),
                             Argument(out->act_max), Argument(ir::None{})});
    const ValueId y = new_node(
        depthwise ? "quantized_depthwise_conv2d_nhwc" : "quantized_conv2d_nhwc", std::move(args),
        int8_spec({out_sizes[0], out_sizes[2], out_sizes[3], out_sizes[1]}), n, before);
    finish(*out, to_nchw(y, n, before));
    return true;
  }

  // Core ATen's linear: addmm(bias, x, permute(W, [1, 0])) or mm(x, permute(W, [1, 0])).
  bool matmul(const Node& n) {
    const bool addmm = n.op.name == "addmm";
    if (addmm && (n.args[3].to_double() != 1.0 || n.args[4].to_double() != 1.0)) return false;
    const ir::Value& wt = g_.value(n.args[addmm ? 2 : 1].tensor());
    if (!wt.is_intermediate()) return false;
    const Node& perm = g_.node(wt.producer);
    const std::string perm_op = perm.op.str();
    if (perm_op != "aten::permute.default" && perm_op != "aten::permute_copy.default") return false;
    const auto& dims = perm.args[1].get<std::vector<int64_t>>();
    if (dims.size() != 2 || (dims[0] != 1 && dims[0] != -1)) return false;
    const Argument bias = addmm ? n.args[0] : Argument(ir::None{});
    if (addmm && g_.value(n.args[0].tensor()).spec.rank() != 1) return keep("bias is not 1-D");
    return linear(n, n.args[addmm ? 1 : 0], perm.args[0].tensor(), bias);
  }

  bool linear(const Node& n, const Argument& input, ValueId weight, const Argument& bias_arg_in) {
    auto x = dequantized(g_, input.tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, true);
    if (!out) return keep("output is not quantized per tensor to int8");
    auto w = quantized_weight(g_, weight);
    if (!w || w->sizes.size() != 2) return keep("weight is not a dequantized int8 constant");
    auto bias = quantized_bias(g_, bias_arg_in, x->p.scale, *w);
    if (!bias) return keep("bias is not a float or int32 constant");
    auto rq = channel_requant(x->p.scale, w->scales, out->p.scale);
    if (!rq) return keep("requantisation scale out of range");
    const ValueId q_out = g_.node(out->quant).outputs[0];
    if (w->zp == 0) {
      if (auto packed = packed_linear(*w, *bias, -x->p.zp, *rq)) {
        const std::string base = n.debug.node_name.empty() ? "linear" : n.debug.node_name;
        const int64_t groups = linear_groups(w->sizes[0]), chunks = linear_chunks(w->sizes[1]);
        const ValueId wv =
            add_constant(g_, base + "_weight_packed", ScalarType::Char,
                         {groups, chunks, kLinearGroup, kLinearChunk}, packed->first);
        const ValueId qv = add_constant(g_, base + "_channel_quant", ScalarType::Int,
                                        {groups, kLinearQuantFields, kLinearGroup}, packed->second);
        const ValueId y = new_node(
            "quantized_linear_packed",
            {TensorRef{x->q}, TensorRef{wv}, TensorRef{qv}, out->p.zp, out->act_min, out->act_max},
            int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
        finish(*out, y);
        return true;
      }
    }
    const bool per_channel = std::any_of(w->scales.begin(), w->scales.end(),
                                         [&](double s) { return s != w->scales[0]; });
    std::vector<int32_t> mult = rq->first, shift = rq->second;
    if (!per_channel) mult.resize(1), shift.resize(1);
    const std::string base = n.debug.node_name.empty() ? "linear" : n.debug.node_name;
    const auto channels = static_cast<int64_t>(mult.size());
    const ValueId mv = add_constant(g_, base + "_multipliers", ScalarType::Int, {channels}, mult);
    const ValueId sv = add_constant(g_, base + "_shifts", ScalarType::Int, {channels}, shift);
    const ValueId wv = add_constant(g_, base + "_weight_q", ScalarType::Char, w->sizes, w->data);
    Argument bias_arg = ir::None{};
    if (!bias->empty()) {
      bias_arg =
          TensorRef{add_constant(g_, base + "_bias_q", ScalarType::Int, {w->sizes[0]}, *bias)};
    }
    const ValueId y =
        new_node("quantized_linear",
                 {TensorRef{x->q}, TensorRef{wv}, bias_arg, ir::None{}, -x->p.zp, -w->zp, out->p.zp,
                  TensorRef{mv}, TensorRef{sv}, out->act_max, out->act_min},
                 int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool add(const Node& n) {
    auto a = dequantized(g_, n.args[0].tensor());
    auto b = n.args[1].is_tensor() ? dequantized(g_, n.args[1].tensor()) : std::nullopt;
    if (!a || !b) return false;
    if (n.args[2].to_double() != 1.0) return keep("alpha != 1");
    auto out = quantized_output(g_, n, true);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (g_.value(a->q).spec.sizes != g_.value(b->q).spec.sizes) return keep("inputs broadcast");
    const double twice_max = 2 * std::max(a->p.scale, b->p.scale);
    const Requant ra = quantize_multiplier(a->p.scale / twice_max);
    const Requant rb = quantize_multiplier(b->p.scale / twice_max);
    const Requant ro = quantize_multiplier(twice_max / ((1 << 20) * out->p.scale));
    if (ro.shift > kMaxShift || ro.shift < kMinShift) return keep("output scale out of range");
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y =
        new_node("quantized_add",
                 {TensorRef{a->q}, a->p.zp, int64_t{ra.multiplier}, int64_t{ra.shift},
                  TensorRef{b->q}, b->p.zp, int64_t{rb.multiplier}, int64_t{rb.shift}, out->p.zp,
                  int64_t{ro.multiplier}, int64_t{ro.shift}, out->act_min, out->act_max},
                 int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool mul(const Node& n) {
    auto a = dequantized(g_, n.args[0].tensor());
    auto b = n.args[1].is_tensor() ? dequantized(g_, n.args[1].tensor()) : std::nullopt;
    if (!a || !b) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (out->p.qmin != -128 || out->p.qmax != 127) return keep("output range is not full int8");
    if (g_.value(a->q).spec.sizes != g_.value(b->q).spec.sizes) return keep("inputs broadcast");
    const Requant r = quantize_multiplier(a->p.scale * b->p.scale / out->p.scale);
    if (r.shift > kMaxShift || r.shift < kMinShift) return keep("output scale out of range");
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y = new_node("quantized_mul",
                               {TensorRef{a->q}, a->p.zp, TensorRef{b->q}, b->p.zp, out->p.zp,
                                int64_t{r.multiplier}, int64_t{r.shift}},
                               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool max_pool(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, true);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
    if (n.args[5].get<bool>()) return keep("ceil_mode");
    if (g_.value(x->q).spec.rank() != 4) return keep("input is not 4-D");
    const auto kernel = pair_arg(n.args[1], 1);
    std::vector<int64_t> stride = pair_arg(n.args[2], 0);
    if (stride[0] == 0) stride = kernel;
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const std::vector<int64_t> os = g_.value(q_out).spec.sizes;
    const NodeId before = out->quant;
    const ValueId xin = to_nhwc(x->q, n, before);
    const ValueId y =
        new_node("quantized_max_pool2d_nhwc",
                 {TensorRef{xin}, kernel, stride, pair_arg(n.args[3], 0), pair_arg(n.args[4], 1),
                  false, x->p.zp, out->p.zp, out->act_min, out->act_max},
                 int8_spec({os[0], os[2], os[3], os[1]}), n, before);
    finish(*out, to_nchw(y, n, before));
    return true;
  }

  bool avg_pool(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    // The mean keeps the input's qparams; a requantize follows when the output has its own.
    const bool same = same_qparams(x->p, out->p);
    const Requant to_out = quantize_multiplier(x->p.scale / out->p.scale);
    if (!same && (to_out.shift > kMaxShift || to_out.shift < kMinShift)) {
      return keep("output scale out of range");
    }
    const std::vector<int64_t> is = g_.value(x->q).spec.sizes;
    if (is.size() != 4) return keep("input is not 4-D");
    const std::string op = n.op.str();
    std::vector<int64_t> kernel, stride, padding = {0, 0};
    bool pad_explicitly = false;
    if (op == "aten::avg_pool2d.default") {
      kernel = pair_arg(n.args[1], 1);
      stride = pair_arg(n.args[2], 0);
      if (stride[0] == 0) stride = kernel;
      padding = pair_arg(n.args[3], 0);
      if (n.args[4].get<bool>()) return keep("ceil_mode");
      if (!n.args[6].is_none()) return keep("divisor_override");
      pad_explicitly = n.args[5].get<bool>() && (padding[0] || padding[1]);
    } else if (op == "aten::mean.dim") {
      // mean over H and W with keepdim: a global average pool.
      if (!n.args[1].is<std::vector<int64_t>>()) return keep("mean over every dim");
      const auto& dims = n.args[1].get<std::vector<int64_t>>();
      std::vector<int64_t> d;
      for (int64_t v : dims) d.push_back(v < 0 ? v + 4 : v);
      std::sort(d.begin(), d.end());
      if (d != std::vector<int64_t>{2, 3} || !n.args[2].get<bool>())
        return keep("not a global pool");
      kernel = stride = {is[2], is[3]};
    } else {
      const auto size = n.args[1].get<std::vector<int64_t>>();
      if (size != std::vector<int64_t>{1, 1}) return keep("adaptive pool to more than 1x1");
      kernel = stride = {is[2], is[3]};
    }
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const std::vector<int64_t> os = g_.value(q_out).spec.sizes;
    const NodeId before = out->quant;
    ValueId src = x->q;
    if (pad_explicitly) {  // torch counts the padding: pad with the zero point (real 0)
      const std::vector<int64_t> pads = {0, 0, padding[0], padding[1]};
      src = new_node("pad", {TensorRef{src}, pads, pads, x->p.zp},
                     int8_spec({is[0], is[1], is[2] + 2 * padding[0], is[3] + 2 * padding[1]}), n,
                     before);
      padding = {0, 0};
    }
    const ValueId xin = to_nhwc(src, n, before);
    const Requant r = quantize_multiplier(x->p.scale);
    ValueId y = new_node("quantized_avg_pool2d_nhwc",
                         {TensorRef{xin}, kernel, stride, padding, false, x->p.zp,
                          int64_t{r.multiplier}, int64_t{r.shift}, ir::None{}},
                         int8_spec({os[0], os[2], os[3], os[1]}), n, before);
    if (!same) {
      y = new_node("requantize",
                   {TensorRef{y}, x->p.zp, out->p.zp, int64_t{to_out.multiplier},
                    int64_t{to_out.shift}, out->p.qmin, out->p.qmax},
                   int8_spec({os[0], os[2], os[3], os[1]}), n, before);
    }
    finish(*out, to_nchw(y, n, before));
    return true;
  }

  bool softmax(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    const int64_t rank = static_cast<int64_t>(g_.value(x->q).spec.rank());
    int64_t dim = n.args[1].get<int64_t>();
    if (dim < 0) dim += rank;
    if (dim != rank - 1) return keep("softmax over a dim other than the last");
    if (out->p.zp != -128 || std::fabs(out->p.scale * 256.0 - 1.0) > 1e-6) {
      return keep("output qparams are not scale 1/256, zero point -128 (CMSIS-NN softmax)");
    }
    // TFLite's int8 softmax preparation (5 integer bits for the scaled input differences).
    constexpr int kIntegerBits = 5;
    const double real = std::min(x->p.scale * double(1 << (31 - kIntegerBits)), 2147483647.0);
    const Requant r = quantize_multiplier(real);
    if (r.shift < 0 || r.shift > 30) return keep("input scale out of range");
    const double max_rescaled = double((1 << kIntegerBits) - 1) *
                                std::ldexp(1.0, 31 - kIntegerBits) / std::ldexp(1.0, r.shift);
    const int64_t diff_min = -static_cast<int64_t>(std::floor(max_rescaled));
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y = new_node("softmax",
                               {TensorRef{x->q}, int64_t{-1}, x->p.zp, out->p.zp,
                                int64_t{r.multiplier}, int64_t{r.shift}, diff_min},
                               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool clamp(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
    const auto bounds = *activation_bounds(n);
    int64_t lo = out->act_min, hi = out->act_max;
    if (std::isfinite(bounds.first)) lo = std::max(lo, quantize_bound(bounds.first, out->p));
    if (std::isfinite(bounds.second)) hi = std::min(hi, quantize_bound(bounds.second, out->p));
    if (lo > hi) return keep("empty clamp range");
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y = new_node("quantized_clamp", {TensorRef{x->q}, lo, hi},
                               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool permute(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
    const size_t rank = g_.value(x->q).spec.rank();
    if (rank > 4 || rank == 0) return keep("more than 4 dims");
    std::vector<int64_t> perm = n.args[1].get<std::vector<int64_t>>();
    for (int64_t& p : perm)
      if (p < 0) p += static_cast<int64_t>(rank);
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y = new_node("transpose", {TensorRef{x->q}, perm},
                               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  bool pad(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
    const auto& pads = n.args[1].get<std::vector<int64_t>>();
    const size_t rank = g_.value(x->q).spec.rank();
    if (rank > 4 || rank == 0 || pads.size() % 2 || pads.size() / 2 > rank)
      return keep("unsupported padding");
    std::vector<int64_t> pre(rank, 0), post(rank, 0);
    for (size_t i = 0; i < pads.size() / 2; ++i) {
      if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) return keep("negative padding (cropping)");
      pre[rank - 1 - i] = pads[2 * i];
      post[rank - 1 - i] = pads[2 * i + 1];
    }
    const int64_t value = quantize_bound(n.args[2].to_double(), x->p);
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const ValueId y = new_node("pad", {TensorRef{x->q}, pre, post, value},
                               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
    finish(*out, y);
    return true;
  }

  // A reshape between quantized ops moves int8 bytes: the portable view_copy takes the int8
  // value directly and the Q/DQ pair around it goes.
  bool view(const Node& n) {
    auto x = dequantized(g_, n.args[0].tensor());
    if (!x) return false;
    auto out = quantized_output(g_, n, false);
    if (!out) return keep("output is not quantized per tensor to int8");
    if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
    const ValueId q_out = g_.node(out->quant).outputs[0];
    const NodeId id = g_.add_node(*n.schema, {TensorRef{x->q}, n.args[1]},
                                  {NewValue{g_.unique_name(g_.value(q_out).name + "_int8"),
                                            int8_spec(g_.value(q_out).spec.sizes)}},
                                  n.debug, out->quant);
    finish(*out, g_.node(id).outputs[0]);
    return true;
  }

  // view(dequantize(q)) == dequantize(view(q)) per tensor: quantizers leave reshapes (flatten
  // before a linear layer) without their own Q/DQ, so the view moves onto the int8 value and
  // the dequantize follows it, where the next op's pattern finds it.
  int move_dequantize_past_views() {
    int moved = 0;
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (!g_.has_node(id) || delegated_.count(id) || near_delegated(id)) continue;
      if (g_.is_dynamic_node(id)) continue;
      const Node n = g_.node(id);
      if (!is_view(n)) continue;
      auto x = dequantized(g_, n.args[0].tensor());
      if (!x) continue;
      const ir::Node dq = g_.node(g_.value(n.args[0].tensor()).producer);
      const ValueId result = n.outputs[0];
      const std::vector<int64_t> sizes = g_.value(result).spec.sizes;
      const NodeId view = g_.add_node(
          n.schema ? *n.schema : *ir::OpSchemaRegistry::global().find("aten::view_copy.default"),
          {TensorRef{x->q}, n.args[1]},
          {NewValue{g_.unique_name(g_.value(result).name + "_int8"), int8_spec(sizes)}}, n.debug,
          id);
      std::vector<Argument> dq_args = dq.args;
      dq_args[0] = TensorRef{g_.node(view).outputs[0]};
      const NodeId new_dq =
          g_.add_node(*dq.schema, std::move(dq_args),
                      {NewValue{g_.unique_name(g_.value(result).name + "_dq"),
                                TensorSpec::contiguous(ScalarType::Float, sizes)}},
                      n.debug, id);
      g_.replace_all_uses(result, g_.node(new_dq).outputs[0]);
      ++moved;
    }
    compiler::remove_dead_code(g_);
    return moved;
  }

  // transpose(transpose(x, p1), p2) with p1[p2[d]] == d is x: the NHWC round trips between
  // neighbouring convolutions and pools disappear.
  // pad (NCHW, H/W only, with the input's zero point) -> transpose to NHWC -> conv/depthwise conv
  // becomes transpose -> conv with the pad's top/left added to the conv's padding and its extra
  // bottom/right row taken by the kernel's bounds checks (TensorFlow SAME padding for stride 2,
  // e.g. MobileNet's): no padded copy, and the transposes around it can then cancel.
  void fold_pads_into_convs() {
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (!g_.has_node(id)) continue;
      const Node& conv = g_.node(id);
      const std::string op = conv.op.str();
      const bool depthwise = op == "cortex_m::quantized_depthwise_conv2d_nhwc.default";
      if (!depthwise && op != "cortex_m::quantized_conv2d_nhwc.default") continue;
      const ir::Value& nhwc = g_.value(conv.args[0].tensor());
      if (!nhwc.is_intermediate() || nhwc.users.size() != 1) continue;
      const Node& t = g_.node(nhwc.producer);
      if (t.op.str() != "cortex_m::transpose.default" ||
          t.args[1].get<std::vector<int64_t>>() != std::vector<int64_t>{0, 2, 3, 1})
        continue;
      const ir::Value& padded = g_.value(t.args[0].tensor());
      if (!padded.is_intermediate() || padded.users.size() != 1) continue;
      const Node& pad = g_.node(padded.producer);
      if (pad.op.str() != "cortex_m::pad.default") continue;
      const auto& pre = pad.args[1].get<std::vector<int64_t>>();
      const auto& post = pad.args[2].get<std::vector<int64_t>>();
      const int64_t zero_point = -conv.args[depthwise ? 7 : 6].to_int();
      if (pre.size() != 4 || pre[0] || pre[1] || post[0] || post[1] ||
          pad.args[3].to_int() != zero_point)
        continue;
      const auto& w = g_.value(conv.args[1].tensor()).spec.sizes;  // [O|1, kH, kW, I|C]
      std::vector<int64_t> padding = pair_arg(conv.args[4], 0);
      bool ok = true;
      for (int d = 0; d < 2; ++d) {
        const int64_t extra = post[2 + d] - pre[2 + d];
        ok = ok && (extra == 0 || (extra == 1 && w[1 + d] > 1));
        padding[d] += pre[2 + d];
      }
      if (!ok) continue;
      const ValueId source = pad.args[0].tensor();
      const auto& s = g_.value(source).spec.sizes;
      const NodeId transpose = t.id;
      g_.set_arg(transpose, 0, TensorRef{source});
      g_.set_spec(nhwc.id, int8_spec({s[0], s[2], s[3], s[1]}));
      g_.set_arg(id, 4, padding);
    }
    compiler::remove_dead_code(g_);
  }

  // add/mul of two inputs transposed the same way (NHWC conv outputs brought back to NCHW for a
  // residual add) computes the same bytes on the untransposed inputs: the add moves before the
  // transposes, one transpose follows it, and the transposes around it can then cancel.
  void sink_transposes_through_elementwise() {
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (!g_.has_node(id)) continue;
      const Node n = g_.node(id);  // a copy: adding nodes may move the graph's node storage
      const std::string op = n.op.str();
      const bool add = op == "cortex_m::quantized_add.default";
      if (!add && op != "cortex_m::quantized_mul.default") continue;
      const size_t a = 0, b = add ? 4 : 2;
      std::vector<int64_t> perm;
      ValueId sources[2] = {ir::kNoValue, ir::kNoValue};
      bool ok = true;
      for (int k = 0; k < 2 && ok; ++k) {
        const ir::Value& v = g_.value(n.args[k == 0 ? a : b].tensor());
        ok = v.is_intermediate();  // other users keep the transpose (or cancel it later)
        if (!ok) break;
        const Node& t = g_.node(v.producer);
        ok = t.op.str() == "cortex_m::transpose.default";
        if (!ok) break;
        const auto& p = t.args[1].get<std::vector<int64_t>>();
        ok = k == 0 || p == perm;
        perm = p;
        sources[k] = t.args[0].tensor();
      }
      if (!ok || g_.value(sources[0]).spec.sizes != g_.value(sources[1]).spec.sizes) continue;
      std::vector<Argument> args = n.args;
      args[a] = TensorRef{sources[0]};
      args[b] = TensorRef{sources[1]};
      const ValueId out = n.outputs[0];
      const ValueId moved = new_node(add ? "quantized_add" : "quantized_mul", std::move(args),
                                     int8_spec(g_.value(sources[0]).spec.sizes), n, id);
      const ValueId back =
          new_node("transpose", {TensorRef{moved}, perm}, g_.value(out).spec, n, id);
      g_.replace_all_uses(out, back);
    }
    compiler::remove_dead_code(g_);
  }

  int cancel_transposes() {
    int removed = 0;
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (!g_.has_node(id)) continue;
      const Node& t2 = g_.node(id);
      if (t2.op.str() != "cortex_m::transpose.default") continue;
      const ir::Value& in = g_.value(t2.args[0].tensor());
      if (!in.is_intermediate()) continue;
      const Node& t1 = g_.node(in.producer);
      if (t1.op.str() != "cortex_m::transpose.default") continue;
      const auto& p1 = t1.args[1].get<std::vector<int64_t>>();
      const auto& p2 = t2.args[1].get<std::vector<int64_t>>();
      bool identity = p1.size() == p2.size();
      for (size_t d = 0; identity && d < p2.size(); ++d) identity = p1[p2[d]] == int64_t(d);
      if (!identity) continue;
      const ValueId source = t1.args[0].tensor();
      const ValueId result = t2.outputs[0];
      const bool is_output =
          std::find(g_.outputs().begin(), g_.outputs().end(), result) != g_.outputs().end();
      if (is_output) continue;  // outputs keep their own memory
      g_.replace_all_uses(result, source);
      g_.remove_node(id);
      ++removed;
    }
    compiler::remove_dead_code(g_);
    return removed;
  }

  // quantize(dequantize(q)) with the same qparams is q; with others it is an int8 requantize.
  void fold_requantize_pairs() {
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (!g_.has_node(id) || near_delegated(id)) continue;
      const Node q = g_.node(id);
      if (!is_op(q, kQuant)) continue;
      auto x = dequantized(g_, q.args[0].tensor());
      auto p = per_tensor_qparams(q);
      if (!x || !p) continue;
      const ValueId out = q.outputs[0];
      if (std::find(g_.outputs().begin(), g_.outputs().end(), out) != g_.outputs().end()) continue;
      if (x->p.zp == p->zp && x->p.scale == p->scale && x->p.qmin <= p->qmin &&
          x->p.qmax >= p->qmax) {
        g_.replace_all_uses(out, x->q);
        continue;
      }
      const Requant r = quantize_multiplier(x->p.scale / p->scale);
      if (r.shift > kMaxShift || r.shift < kMinShift) continue;
      const ValueId y = new_node("requantize",
                                 {TensorRef{x->q}, x->p.zp, p->zp, int64_t{r.multiplier},
                                  int64_t{r.shift}, p->qmin, p->qmax},
                                 int8_spec(g_.value(out).spec.sizes), q, id);
      g_.replace_all_uses(out, y);
    }
    compiler::remove_dead_code(g_);
  }

  // The per-tensor int8 Q/DQ that remain (graph boundaries, around float ops) run as cortex_m
  // kernels; ops with the same arguments.
  int convert_quant_nodes() {
    int converted = 0;
    for (NodeId id : std::vector<NodeId>(g_.nodes())) {
      if (delegated_.count(id)) continue;
      const Node& n = g_.node(id);
      const bool q = is_op(n, kQuant), dq = is_op(n, kDequant);
      if ((!q && !dq) || !per_tensor_qparams(n)) continue;
      if (dq && n.args.size() > 6 && !n.args[6].is_none() &&
          !(n.args[6].is<ScalarType>() && n.args[6].get<ScalarType>() == ScalarType::Float)) {
        continue;
      }
      std::vector<Argument> args(n.args.begin(), n.args.begin() + 6);
      g_.set_op(id, cortex_m_op(q ? "quantize_per_tensor" : "dequantize_per_tensor"),
                std::move(args));
      ++converted;
    }
    return converted;
  }

  Graph& g_;
  const std::unordered_set<NodeId>& delegated_;
  CortexMLoweringReport report_;
  std::string reason_;
};

}  // namespace

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

CortexMLoweringReport lower_to_cortex_m(compiler::ir::Graph& graph,
                                        const std::unordered_set<compiler::ir::NodeId>& delegated) {
  return Lowering(graph, delegated).run();
}

size_t cortex_m_scratch_bytes(const compiler::ir::Graph& graph) {
  size_t most = 0;
  for (NodeId id : graph.nodes()) most = std::max(most, node_scratch(graph, graph.node(id)).bytes);
  return most;
}

}  // namespace pteron::cortex_m::aot
