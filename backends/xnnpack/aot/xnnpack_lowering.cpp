#include "backends/xnnpack/aot/xnnpack_lowering.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "backends/xnnpack/aot/payload_builder.h"
#include "backends/xnnpack/aot/xnnpack_op_info.h"
#include "compiler/compile_error.h"

namespace pteron::xnnpack::aot {
namespace {

using compiler::LoweredRegion;
using compiler::Region;

// Constants from this size up are the program's named data, stored once however many regions
// read them; smaller ones (scalars, short biases) stay in the payload, where they cost less
// than a named entry's segment, table row and alignment padding (about 150 bytes).
constexpr size_t kMinSharedConstantBytes = 256;

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
      if (!x.is_intermediate() || !members.count(x.producer) || skipped_.count(x.producer))
        continue;
      const Node& p = g_.node(x.producer);
      if (!takes_output_range(p) || x.users.size() != 1 || region_outputs.count(x.id) ||
          ranges_.count(p.id))
        continue;
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
        // Per node, supports() cannot see which region inputs stay int8.
        if (!dq)
          compiler::refuse("int8 region input '" + g_.value(r_.inputs[i]).name +
                           "' is not dequantized inside the region");
        const QuantInfo q = quant_of(g_, *dq);
        t = b_.add_tensor(DType::kQInt8, xnn_dims(s),
                          Quant::per_tensor(q.scales[0], q.zero_points[0]));
      } else {
        t = b_.add_tensor(DType::kFloat32, xnn_dims(s));
      }
      const std::vector<uint8_t> order = s.rank() == 4 ? kChannelsLast : std::vector<uint8_t>{};
      b_.mark_external(t, ExternalKind::kInput, uint32_t(i), order);
      ids_[r_.inputs[i]] = t;
      result.input_dim_orders.push_back(order.empty() ? compiler::ir::identity_dim_order(s.rank())
                                                      : order);
    }
    for (NodeId id : r_.nodes) {
      if (skipped_.count(id)) continue;
      const Node& n = g_.node(id);
      try {
        emit(n);
      } catch (const compiler::Refusal& r) {
        compiler::refuse(n.describe() + ": " + r.what());
      } catch (const std::exception& e) {  // a broken invariant: named, never a refusal
        throw compiler::CompileError(n.describe() + ": " + e.what());
      }
    }
    for (size_t j = 0; j < r_.outputs.size(); ++j) {
      const ValueId v = r_.outputs[j];
      const TensorSpec& s = g_.value(v).spec;
      if (!ids_.count(v) && qalias_.count(v)) in(v);  // a dequantized output: Convert to fp32
      auto it = ids_.find(v);
      if (it == ids_.end())
        throw std::runtime_error("region output '" + g_.value(v).name + "' was not computed");
      const std::vector<uint8_t> order = s.rank() == 4 ? kChannelsLast : std::vector<uint8_t>{};
      b_.mark_external(it->second, ExternalKind::kOutput, uint32_t(r_.inputs.size() + j), order);
      result.output_dim_orders.push_back(order.empty() ? compiler::ir::identity_dim_order(s.rank())
                                                       : order);
    }
    b_.set_num_args(uint32_t(r_.inputs.size() + r_.outputs.size()));
    if (std::string why = b_.validate(); !why.empty()) {
      result.reason = "XNNPACK refused the region: " + why;
      return result;
    }
    std::vector<NamedConstant> named;
    result.payload = b_.build_sharing(kMinSharedConstantBytes, &named);
    for (NamedConstant& c : named)
      result.named_data.emplace_back(std::move(c.key), std::move(c.bytes));
    result.ok = true;
    return result;
  }

 private:
  TensorId in(ValueId v) {
    if (quant_mode_) {  // a quantized node reads the int8 tensor its input was dequantized from
      auto q = qalias_.find(v);
      if (q == qalias_.end())  // its dequantize stayed outside the region
        compiler::refuse("quantized node input '" + g_.value(v).name +
                         "' is not dequantized int8 inside the region");
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
    if (!is_static(g_, v))
      throw std::runtime_error("value '" + g_.value(v).name + "' is read before it is computed");
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
    if (is_op(n, kDequantizeChannel) ||
        (is_op(n, kDequantize) && weight_dequantize(g_, n.outputs[0]))) {
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
  // qint8 (conv and linear with int8 weights of zero point 0, add/sub/mul, max pool, clamp and
  // constant pad with equal input and output quantization, global average pool, reshape). A
  // TensorFlow-style SAME pad before a strided convolution (MobileNet's, in the MLPerf Tiny
  // models) ran in fp32 between two conversions: 190 us against 89 for the padded convolution
  // alone on a 3x96x96 int8 input here. The op then reads
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
        case Kind::kConv:
          acts = {n.arg("input").tensor()};
          break;
        case Kind::kLinear:
          acts = {n.arg("input").tensor()};
          break;
        case Kind::kBinary:
          if (info.scalar_other ||
              (info.binary != BinaryOp::kAdd && info.binary != BinaryOp::kSubtract &&
               info.binary != BinaryOp::kMultiply))
            continue;
          if (n.op.name != "mul" && n.arg("alpha").to_double() != 1.0) continue;
          acts = {n.arg("self").tensor(), n.arg("other").tensor()};
          break;
        case Kind::kMaxPool:
        case Kind::kGlobalPool:
        case Kind::kClampLike:
        case Kind::kReshape:
        case Kind::kPad:
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
      if (fo.users.size() != 1 || region_outputs.count(final_out) || !members.count(fo.users[0]))
        continue;
      const Node& q = g_.node(fo.users[0]);
      if (!is_op(q, kQuantize)) continue;
      const QuantInfo qo = quant_of(g_, q), qi = quant_of(g_, *dqs[0]);
      const bool same = qo.scales[0] == qi.scales[0] && qo.zero_points[0] == qi.zero_points[0];
      if (info.kind == Kind::kReshape &&
          !reshape_reason(g_.value(acts[0]).spec.sizes, fo.spec.sizes).empty())
        continue;
      if ((info.kind == Kind::kMaxPool || info.kind == Kind::kClampLike ||
           info.kind == Kind::kReshape || info.kind == Kind::kPad) &&
          !same)
        continue;
      if (info.kind == Kind::kConv || info.kind == Kind::kLinear) {
        const Node* wdq = weight_dequantize(g_, n.arg("weight").tensor());
        if (!wdq || g_.value(wdq->arg("input").tensor()).spec.dtype != ScalarType::Char) continue;
        const QuantInfo wq = quant_of(g_, *wdq);
        if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(),
                        [](int32_t z) { return z != 0; }))
          continue;
        if (!n.arg("bias").is_none() && !is_static(g_, n.arg("bias").tensor())) continue;
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
        return add(n, LeakyRelu{float(n.arg("negative_slope").to_double())}, {in(n.inputs()[0])},
                   out(y));
      case Kind::kElu:
        return add(n, Elu{float(n.arg("alpha").to_double())}, {in(n.inputs()[0])}, out(y));
      case Kind::kHardsigmoid: {
        // clamp(x + 3, 0, 6) / 6 == clamp(x / 6 + 1/2, 0, 1): a multiply, then an add whose
        // output range is the clamp (MobileNetV3's squeeze-excite gate stays in the region).
        const TensorId x = in(n.inputs()[0]);
        const TensorId scaled = b_.add_tensor(DType::kFloat32, xnn_dims(os));
        b_.add_node(Binary{BinaryOp::kMultiply}, {x, float_constant({1.0f / 6.0f}, {}, 0)},
                    {scaled});
        b_.add_node(Binary{BinaryOp::kAdd}, {scaled, float_constant({0.5f}, {}, 0)}, {out(y)},
                    OutputRange{0.0f, 1.0f});
        return;
      }
      case Kind::kMaxPool:
      case Kind::kAvgPool:
        return emit_pool(n, info.kind);
      case Kind::kGlobalPool: {
        const TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
        const TensorId x = in(n.arg("self").tensor());
        if (os.rank() == 4) return add(n, GlobalAvgPool2d{}, {x}, out(y));
        const std::vector<uint32_t> pooled_dims = {uint32_t(xs.sizes[0]), 1, 1,
                                                   uint32_t(xs.sizes[1])};
        const TensorId pooled =
            quant_mode_ ? b_.add_tensor(DType::kQInt8, pooled_dims,
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
          if (r_outputs_.count(y)) compiler::refuse("an NHWC flatten leaves the region");
          flattened_nhwc_[y] = {xs.sizes[1], xs.sizes[2], xs.sizes[3]};
        }
        return add(n, StaticReshape{xnn_dims(os)}, {in(n.inputs()[0])}, out(y));
      }
      case Kind::kResize: {
        const bool align = n.arg("align_corners").get<bool>();
        ResizeBilinear2d attrs{uint32_t(os.sizes[2]), uint32_t(os.sizes[3]), align, false};
        return add(n, attrs, {in(n.inputs()[0])}, out(y));
      }
      case Kind::kResizeNearest: {
        // Nearest by integer factors (checked by the partitioner): a depthwise deconvolution
        // (C groups of one channel) with a kernel of ones and stride = kernel = the factor,
        // so each output takes exactly one input times 1.0: an exact copy. XNNPACK's filter
        // layout is [groups * group_output_channels, KH, KW, group_input_channels].
        const TensorSpec& xs = g_.value(n.inputs()[0]).spec;
        Deconv2d d;
        d.kernel_height = d.stride_height = uint32_t(os.sizes[2] / xs.sizes[2]);
        d.kernel_width = d.stride_width = uint32_t(os.sizes[3] / xs.sizes[3]);
        d.groups = uint32_t(xs.sizes[1]);
        d.group_input_channels = d.group_output_channels = 1;
        const std::vector<float> ones(size_t(xs.sizes[1]) * d.kernel_height * d.kernel_width, 1.0f);
        const TensorId filter =
            b_.add_constant(DType::kFloat32, {d.groups, d.kernel_height, d.kernel_width, 1},
                            std::span<const float>(ones));
        return add(n, d, {in(n.inputs()[0]), filter}, out(y));
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
    c.padding =
        Padding::symmetric(uint32_t(pair_at(padding, 0, 0)), uint32_t(pair_at(padding, 1, 0)));
    if (quant_mode_) {
      const auto [filter, bias] = quantized_weights(n, x.id, /*conv_layout=*/true);
      return add(n, c, {in(x.id), filter, bias}, out(n.outputs[0]));
    }
    const std::vector<float> wdata = permute(static_floats(g_, w.id), ws, {0, 2, 3, 1});
    const TensorId filter = b_.add_constant(
        DType::kFloat32, {uint32_t(ws[0]), uint32_t(ws[2]), uint32_t(ws[3]), uint32_t(ws[1])},
        std::span<const float>(wdata));
    std::vector<TensorId> inputs = {in(x.id), filter};
    if (!n.arg("bias").is_none()) {
      const std::vector<float> bias = static_floats(g_, n.arg("bias").tensor());
      inputs.push_back(
          b_.add_constant(DType::kFloat32, {uint32_t(bias.size())}, std::span<const float>(bias)));
    }
    add(n, c, inputs, out(n.outputs[0]));
  }

  // The int32 bias of a quantized conv or linear at XNNPACK's scales (input scale x weight
  // scale per channel): a PT2E int32 bias already quantized at those scales is taken as it is;
  // any other bias (fp32, or int32 at other scales) is requantized from its real values.
  std::vector<int32_t> quantized_bias(const Node& n, const std::vector<float>& scales) const {
    std::vector<int32_t> q(scales.size(), 0);
    if (n.arg("bias").is_none()) return q;
    const ValueId b = n.arg("bias").tensor();
    if (const Node* dq = weight_dequantize(g_, b);
        dq && g_.value(dq->arg("input").tensor()).spec.dtype == ScalarType::Int) {
      const QuantInfo bq = quant_of(g_, *dq);
      bool same = true;
      for (size_t c = 0; c < scales.size() && same; ++c) {
        const size_t k = bq.scales.size() == 1 ? 0 : c;
        same = k < bq.scales.size() && bq.scales[k] == scales[c] && bq.zero_points[k] == 0;
      }
      if (same) {
        const std::vector<double> raw = read_numbers(g_.value(dq->arg("input").tensor()));
        if (raw.size() == q.size()) {
          for (size_t c = 0; c < q.size(); ++c) q[c] = int32_t(raw[c]);
          return q;
        }
      }
    }
    const std::vector<float> real = static_floats(g_, b);
    if (real.size() != q.size())
      throw std::runtime_error("bias has " + std::to_string(real.size()) + " values for " +
                               std::to_string(q.size()) + " output channels");
    for (size_t c = 0; c < q.size(); ++c)
      q[c] = int32_t(std::lrint(double(real[c]) / double(scales[c])));
    return q;
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
    const bool per_channel = wq.axis >= 0 && wq.scales.size() == oc;
    std::vector<float> bias_scales(oc);
    for (size_t c = 0; c < oc; ++c) bias_scales[c] = xq.scales[0] * wq.scales[per_channel ? c : 0];
    const std::vector<int32_t> qbias = quantized_bias(n, bias_scales);
    if (per_channel) {
      const TensorId f = b_.add_constant(DType::kQCInt8, wdims, std::span<const int8_t>(wdata),
                                         Quant::per_channel(wq.scales, 0));
      const TensorId b =
          b_.add_constant(DType::kQCInt32, {uint32_t(oc)}, std::span<const int32_t>(qbias),
                          Quant::per_channel(bias_scales, 0));
      return {f, b};
    }
    const TensorId f = b_.add_constant(DType::kQInt8, wdims, std::span<const int8_t>(wdata),
                                       Quant::per_tensor(wq.scales[0], 0));
    const TensorId b =
        b_.add_constant(DType::kQInt32, {uint32_t(oc)}, std::span<const int32_t>(qbias),
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
    const TensorId x4 = b_.add_tensor(DType::kQInt8, {m, 1, 1, k},
                                      Quant::per_tensor(xq.scales[0], xq.zero_points[0]));
    b_.add_node(StaticReshape{{m, 1, 1, k}}, {in(x)}, {x4});
    const TensorId y4 = b_.add_tensor(
        DType::kQInt8, {m, 1, 1, oc},
        Quant::per_tensor(quant_out_params_.scales[0], quant_out_params_.zero_points[0]));
    Conv2d c;
    c.group_input_channels = k;
    c.group_output_channels = oc;
    add(n, c, {x4, f, b}, y4);
    b_.add_node(StaticReshape{xnn_dims(g_.value(n.outputs[0]).spec)}, {y4}, {out(n.outputs[0])});
  }

  void emit_linear(const Node& n, Kind kind) {
    if (quant_mode_) return emit_quantized_linear(n);
    const char* in_name =
        kind == Kind::kLinear ? "input" : (kind == Kind::kAddmm ? "mat1" : "self");
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
            if (transposed)
              reordered[size_t(to * outs + o)] = wdata[size_t(from * outs + o)];
            else
              reordered[size_t(o * c * h * wd + to)] = wdata[size_t(o * c * h * wd + from)];
          }
        }
      }
      wdata = std::move(reordered);
    }
    const std::vector<uint32_t> wdims(w.spec.sizes.begin(), w.spec.sizes.end());
    FullyConnected fc;
    fc.transpose_weights = kind != Kind::kLinear;  // mm/addmm weights are [in, out]
    std::vector<TensorId> inputs = {
        in(n.arg(in_name).tensor()),
        b_.add_constant(DType::kFloat32, wdims, std::span<const float>(wdata))};
    const char* bias_name =
        kind == Kind::kLinear ? "bias" : (kind == Kind::kAddmm ? "self" : nullptr);
    if (bias_name && !n.arg(bias_name).is_none()) {
      const std::vector<float> bias = static_floats(g_, n.arg(bias_name).tensor());
      inputs.push_back(
          b_.add_constant(DType::kFloat32, {uint32_t(bias.size())}, std::span<const float>(bias)));
    }
    add(n, fc, inputs, out(n.outputs[0]));
  }

  void emit_pool(const Node& n, Kind kind) {
    const Value& x = g_.value(n.arg("self").tensor());
    const TensorSpec& os = g_.value(n.outputs[0]).spec;
    const auto k = int_list(n, "kernel_size"), s = int_list(n, "stride"),
               p = int_list(n, "padding");
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
    const auto extra = [&](int64_t in, uint32_t lo, uint32_t hi, uint32_t kk, uint32_t st,
                           uint32_t d, int64_t want) -> uint32_t {
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

}  // namespace

LoweredRegion lower_region(const Graph& graph, const Region& region) {
  return Lowering(graph, region).run();
}

}  // namespace pteron::xnnpack::aot
