#include "compiler/quantize/quantize.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler {
namespace {

// How the quantizer treats a node (see quantize.h).
enum class Role {
  None,        // stays float; reads dequantized values if its inputs are quantized
  WeightedOp,  // conv / linear with a constant float weight: int8 weights, quantized I/O
  Binary,      // add / mul of two float activations
  Activation,  // relu / hardtanh / clamp: fused into a WeightedOp or Binary before it
  Shared,      // max pool, views, nearest upsample, pads: the output reuses the input's parameters
  Plain,       // pools, mean, cat, bilinear upsample: inputs and output quantized independently
};

bool is_float_activation(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  return !value.is_constant() && value.spec.dtype == ScalarType::Float;
}

bool is_float_constant(const ir::Graph& g, const ir::Argument& a) {
  if (!a.is_tensor()) return false;
  const ir::Value& v = g.value(a.tensor());
  return v.is_constant() && v.spec.dtype == ScalarType::Float && v.spec.is_contiguous();
}

Role role_of(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.empty() || n.outputs[0] == ir::kNoValue || !is_float_activation(g, n.outputs[0]))
    return Role::None;
  if (ir::any_overload_of(n, {ops::aten::convolution})) {
    const bool transposed = n.arg("transposed").get<bool>();
    const bool bias_ok = n.arg("bias").is_none() || is_float_constant(g, n.arg("bias"));
    return !transposed && is_float_constant(g, n.arg("weight")) && bias_ok &&
                   is_float_activation(g, n.arg("input").tensor())
               ? Role::WeightedOp
               : Role::None;
  }
  if (ir::any_overload_of(n, {ops::aten::linear})) {
    const bool bias_ok = n.arg("bias").is_none() || is_float_constant(g, n.arg("bias"));
    return is_float_constant(g, n.arg("weight")) &&
                   g.value(n.arg("weight").tensor()).spec.rank() == 2 && bias_ok &&
                   is_float_activation(g, n.arg("input").tensor())
               ? Role::WeightedOp
               : Role::None;
  }
  if (n.is(ops::aten::add_Tensor) || n.is(ops::aten::mul_Tensor)) {
    if (!n.arg("self").is_tensor() || !n.arg("other").is_tensor()) return Role::None;
    if (!is_float_activation(g, n.arg("self").tensor()) ||
        !is_float_activation(g, n.arg("other").tensor()))
      return Role::None;
    if (n.op.name == "add" && n.arg("alpha").to_double() != 1.0) return Role::None;  // alpha
    return Role::Binary;
  }
  if (ir::any_overload_of(n, {ops::aten::relu, ops::aten::hardtanh, ops::aten::clamp}))
    return Role::Activation;
  if (ir::any_overload_of(n, {ops::aten::max_pool2d_with_indices})) {
    return n.outputs.size() < 2 || n.outputs[1] == ir::kNoValue ||
                   g.value(n.outputs[1]).users.empty()
               ? Role::Shared
               : Role::None;
  }
  // Nearest upsampling copies values: its output keeps the input's parameters (the int8 kernels
  // then move bytes). Bilinear makes new values: quantized on its own, as a pool.
  if (ir::any_overload_of(n, {ops::aten::upsample_nearest2d})) return Role::Shared;
  // Pads move values too (a constant pad of 0 adds the zero point, exact: the range holds 0).
  if (ir::any_overload_of(n, {ops::aten::reflection_pad1d, ops::aten::reflection_pad2d,
                              ops::aten::reflection_pad3d, ops::aten::replication_pad1d,
                              ops::aten::replication_pad2d, ops::aten::replication_pad3d})) {
    return Role::Shared;
  }
  if (ir::any_overload_of(n, {ops::aten::constant_pad_nd})) {
    return n.args.size() < 3 || n.arg("value").is_none() || n.arg("value").to_double() == 0.0
               ? Role::Shared
               : Role::None;
  }
  if (ir::any_overload_of(n, {ops::aten::upsample_bilinear2d})) return Role::Plain;
  if (ir::any_overload_of(n, {ops::aten::view, ops::aten::view_copy, ops::aten::permute,
                              ops::aten::permute_copy, ops::aten::squeeze, ops::aten::squeeze_copy,
                              ops::aten::unsqueeze, ops::aten::unsqueeze_copy})) {
    return Role::Shared;
  }
  if (ir::any_overload_of(n, {ops::aten::avg_pool2d, ops::aten::_adaptive_avg_pool2d,
                              ops::aten::mean, ops::aten::cat})) {
    return Role::Plain;
  }
  return Role::None;
}

// The fusable activation reading `v`, when it is v's only user and v is not a graph output.
const ir::Node* fused_activation(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (value.users.size() != 1 || g.is_output(v)) return nullptr;
  const ir::Node& user = g.node(value.users[0]);
  return role_of(g, user) == Role::Activation && user.arg("self").is_tensor() &&
                 user.arg("self").tensor() == v
             ? &user
             : nullptr;
}

// Which activations get quantize/dequantize nodes, and which reuse another's parameters.
struct Plan {
  std::vector<bool> quantized;                            // by value id
  std::unordered_map<ir::ValueId, ir::ValueId> share_of;  // value -> value whose params it reuses
  std::vector<ir::NodeId> weighted;                       // conv / linear nodes
  size_t ops = 0;
};

Plan make_plan(const ir::Graph& g, bool int8_io) {
  Plan plan;
  plan.quantized.assign(g.value_capacity(), false);
  std::unordered_set<ir::NodeId> fused;
  auto mark = [&](ir::ValueId v) {
    if (is_float_activation(g, v)) plan.quantized[v] = true;
  };
  auto mark_output = [&](const ir::Node& n) {
    if (const ir::Node* act = fused_activation(g, n.outputs[0])) {
      fused.insert(act->id);
      mark(act->outputs[0]);
    } else {
      mark(n.outputs[0]);
    }
  };
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    switch (role_of(g, n)) {
      case Role::None:
        break;
      case Role::WeightedOp:
        mark(n.arg("input").tensor());
        mark_output(n);
        plan.weighted.push_back(id);
        ++plan.ops;
        break;
      case Role::Binary:
        mark(n.arg("self").tensor());
        mark(n.arg("other").tensor());
        mark_output(n);
        ++plan.ops;
        break;
      case Role::Activation:
        if (fused.count(id)) break;  // its output was marked with the op it is fused into
        mark(n.arg("self").tensor());
        mark(n.outputs[0]);
        ++plan.ops;
        break;
      case Role::Shared:
        mark(n.args[0].tensor());
        mark(n.outputs[0]);
        if (plan.quantized[n.args[0].tensor()]) plan.share_of[n.outputs[0]] = n.args[0].tensor();
        ++plan.ops;
        break;
      case Role::Plain:
        for (ir::ValueId v : n.inputs()) mark(v);
        mark(n.outputs[0]);
        ++plan.ops;
        break;
    }
  }
  if (int8_io) {
    for (ir::ValueId v : g.inputs()) mark(v);
    for (ir::ValueId v : g.outputs()) mark(v);
  }
  return plan;
}

std::string format_qparams(const QParams& q) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "scale %.9g, zero point %lld", q.scale,
                static_cast<long long>(q.zp));
  return buf;
}

template <typename T>
ir::ValueId add_constant(ir::Graph& g, const std::string& name, ScalarType dtype,
                         std::vector<int64_t> sizes, const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const std::string unique = g.unique_name(name);
  return g.add_constant(unique, ir::TensorSpec::contiguous(dtype, std::move(sizes)),
                        ir::ConstantData::owned(std::move(bytes), unique));
}

const ir::OpSchema& schema(std::string_view name) {
  const ir::OpSchema* s = ir::OpSchemaRegistry::global().find(name);
  if (s == nullptr) throw CompileError("quantize: the op table has no " + std::string(name));
  return *s;
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, const QuantizeOptions& o) : g_(g), o_(o) {}

  // quantize -> dequantize for activation `v` with parameters `q`; one dequantize per user.
  void quantize_activation(ir::ValueId v, const QParams& q) {
    const ir::Value& value = g_.value(v);
    const std::vector<ir::NodeId> users = value.users;
    const bool output = g_.is_output(v);
    ir::ValueId qv = v;
    if (o_.int8_io && value.is_input()) {
      ir::TensorSpec spec = value.spec;
      spec.dtype = ScalarType::Char;
      g_.set_spec(v, spec);  // the caller passes int8 data quantized with `q`
    } else {
      qv = add_q(v, q, insertion_point_after(v));
    }
    for (ir::NodeId user : users) {
      const ir::ValueId dq = add_dq(qv, q, user, g_.value(v).name);
      std::vector<ir::Argument> args = g_.node(user).args;
      for (ir::Argument& a : args) a.replace_value(v, dq);
      g_.set_args(user, std::move(args));
    }
    if (output) {
      std::vector<ir::ValueId> outputs = g_.outputs();
      const ir::ValueId replacement =
          o_.int8_io ? qv : add_dq(qv, q, ir::kNoNode, g_.value(v).name);
      for (ir::ValueId& out : outputs) {
        if (out == v) out = replacement;
      }
      g_.set_outputs(std::move(outputs));
    }
  }

  // int8 per-channel weight (and int32 bias) behind dequantize_per_channel for conv/linear.
  size_t quantize_weights(ir::NodeId id, const QParams* input_q, bool int32_bias) {
    // Copies: adding constants below may move the graph's value table.
    const ir::ValueId w_id = g_.node(id).arg("weight").tensor();
    const ir::TensorSpec w_spec = g_.value(w_id).spec;
    const std::string w_name = g_.value(w_id).name;
    const int64_t channels = w_spec.sizes[0];
    const std::span<const float> wf(
        reinterpret_cast<const float*>(g_.value(w_id).constant->bytes.data()),
        static_cast<size_t>(w_spec.numel()));
    const PerChannelWeights qw = quantize_weights_per_channel(wf, channels);
    const ir::ValueId wq =
        add_constant(g_, w_name + "_int8", ScalarType::Char, w_spec.sizes, qw.values);
    const ir::ValueId wdq =
        add_dq_per_channel(wq, qw.scales, -127, 127, ScalarType::Char, id, w_spec, w_name);
    g_.set_arg(id, "weight", ir::TensorRef{wdq});
    remove_if_unused(w_id);
    size_t bytes = qw.values.size();
    const ir::Argument bias_arg = g_.node(id).arg("bias");
    if (int32_bias && input_q != nullptr && !bias_arg.is_none()) {
      const ir::ValueId b_id = bias_arg.tensor();
      const ir::TensorSpec b_spec = g_.value(b_id).spec;
      const std::string b_name = g_.value(b_id).name;
      const std::span<const float> bf(
          reinterpret_cast<const float*>(g_.value(b_id).constant->bytes.data()),
          static_cast<size_t>(b_spec.numel()));
      const PerChannelBias qb = quantize_bias(bf, static_cast<float>(input_q->scale), qw.scales);
      const ir::ValueId bq =
          add_constant(g_, b_name + "_int32", ScalarType::Int, b_spec.sizes, qb.values);
      const ir::ValueId bdq = add_dq_per_channel(bq, qb.scales, INT32_MIN, INT32_MAX,
                                                 ScalarType::Int, id, b_spec, b_name);
      g_.set_arg(id, "bias", ir::TensorRef{bdq});
      remove_if_unused(b_id);
      bytes += qb.values.size() * sizeof(int32_t);
    }
    return bytes;
  }

 private:
  // The node before which a quantize of `v` goes: right after v's producer (first for inputs).
  ir::NodeId insertion_point_after(ir::ValueId v) const {
    const auto& order = g_.nodes();
    if (order.empty()) return ir::kNoNode;
    const ir::Value& value = g_.value(v);
    if (!value.is_intermediate()) return order.front();
    auto it = std::find(order.begin(), order.end(), value.producer);
    return ++it == order.end() ? ir::kNoNode : *it;
  }

  ir::ValueId add_q(ir::ValueId v, const QParams& q, ir::NodeId before) {
    const ir::Value& value = g_.value(v);
    ir::TensorSpec spec = value.spec;
    spec.dtype = ScalarType::Char;
    static const ir::OpSchema& s = schema(ops::quantized_decomposed::quantize_per_tensor);
    const std::string name = g_.unique_name("quantize_" + value.name);
    const ir::NodeId id =
        g_.add_node(s, {ir::TensorRef{v}, q.scale, q.zp, q.qmin, q.qmax, ScalarType::Char},
                    {ir::NewValue{name, spec}}, debug_of(v), before);
    return g_.node(id).outputs[0];
  }

  ir::ValueId add_dq(ir::ValueId qv, const QParams& q, ir::NodeId before,
                     const std::string& float_name) {
    ir::TensorSpec spec = g_.value(qv).spec;
    spec.dtype = ScalarType::Float;
    static const ir::OpSchema& s = schema(ops::quantized_decomposed::dequantize_per_tensor);
    const std::string name = g_.unique_name("dequantize_" + float_name);
    const ir::NodeId id = g_.add_node(
        s, {ir::TensorRef{qv}, q.scale, q.zp, q.qmin, q.qmax, ScalarType::Char, ir::None{}},
        {ir::NewValue{name, spec}},
        before == ir::kNoNode ? ir::DebugHandle{} : g_.node(before).debug, before);
    return g_.node(id).outputs[0];
  }

  // dequantize_per_channel(q, scales, zero points 0, axis 0) placed before node `before`.
  ir::ValueId add_dq_per_channel(ir::ValueId q, const std::vector<float>& scales, int64_t qmin,
                                 int64_t qmax, ScalarType dtype, ir::NodeId before,
                                 ir::TensorSpec float_spec, const std::string& float_name) {
    static const ir::OpSchema& s = schema(ops::quantized_decomposed::dequantize_per_channel);
    const auto channels = static_cast<int64_t>(scales.size());
    const std::string q_name = g_.value(q).name;
    const ir::ValueId sv =
        add_constant(g_, q_name + "_scales", ScalarType::Float, {channels}, scales);
    const ir::ValueId zv = add_constant(g_, q_name + "_zero_points", ScalarType::Long, {channels},
                                        std::vector<int64_t>(scales.size(), 0));
    const std::string name = g_.unique_name("dequantize_" + float_name);
    const ir::DebugHandle debug = g_.node(before).debug;
    const ir::NodeId id = g_.add_node(s,
                                      {ir::TensorRef{q}, ir::TensorRef{sv}, ir::TensorRef{zv},
                                       int64_t{0}, qmin, qmax, dtype, ir::None{}},
                                      {ir::NewValue{name, std::move(float_spec)}}, debug, before);
    return g_.node(id).outputs[0];
  }

  void remove_if_unused(ir::ValueId constant) {
    const ir::Value& v = g_.value(constant);
    if (v.is_constant() && v.users.empty() && !g_.is_output(constant)) g_.remove_constant(constant);
  }

  ir::DebugHandle debug_of(ir::ValueId v) const {
    const ir::Value& value = g_.value(v);
    return value.is_intermediate() ? g_.node(value.producer).debug : ir::DebugHandle{};
  }

  ir::Graph& g_;
  const QuantizeOptions& o_;
};

QuantObserver default_observer(QuantScheme s) {
  return s == QuantScheme::CortexM ? QuantObserver::MinMax : QuantObserver::Percentile;
}

}  // namespace

QuantScheme parse_quant_scheme(std::string_view name) {
  if (name == "cortex-m") return QuantScheme::CortexM;
  if (name == "xnnpack") return QuantScheme::Xnnpack;
  if (name == "ethos-u") return QuantScheme::EthosU;
  throw CompileError("unknown quantization scheme '" + std::string(name) +
                     "' (cortex-m, xnnpack or ethos-u)");
}

std::string_view quant_scheme_name(QuantScheme scheme) {
  switch (scheme) {
    case QuantScheme::CortexM:
      return "cortex-m";
    case QuantScheme::Xnnpack:
      return "xnnpack";
    case QuantScheme::EthosU:
      return "ethos-u";
  }
  return "?";
}

QuantObserver parse_quant_observer(std::string_view name) {
  if (name == "minmax") return QuantObserver::MinMax;
  if (name == "percentile") return QuantObserver::Percentile;
  throw CompileError("unknown observer '" + std::string(name) + "' (minmax or percentile)");
}

QuantizeReport quantize_graph(ir::Graph& graph, const QuantizeOptions& options) {
  for (ir::NodeId id : graph.nodes()) {
    if (graph.node(id).op.ns == "quantized_decomposed") {
      throw CompileError(graph.node(id).describe() +
                         ": the model is already quantized (drop --quantize)");
    }
  }
  QuantizeReport report;
  report.scheme = std::string(quant_scheme_name(options.scheme));
  const QuantObserver observer = options.observer.value_or(default_observer(options.scheme));
  char observer_name[48];
  std::snprintf(observer_name, sizeof(observer_name), "percentile %.6g%%", options.percentile);
  report.observer = observer == QuantObserver::MinMax ? "minmax" : observer_name;
  if (observer == QuantObserver::Percentile &&
      !(options.percentile > 50 && options.percentile <= 100)) {
    throw CompileError("percentile must be in (50, 100], got " +
                       std::to_string(options.percentile));
  }
  report.samples = check_calibration_data(graph, options.calibration);

  if (options.int8_io) {
    // The caller's int8 tensor cannot take the float value the model writes back into it.
    for (const ir::BufferMutation& m : graph.buffer_mutations()) {
      if (graph.value(m.buffer).is_input())
        throw CompileError("int8_io: the model writes into its input '" +
                           graph.value(m.buffer).name +
                           "' in place, which an int8 input cannot hold; quantize without int8_io "
                           "or clone the input before changing it");
    }
  }
  const Plan plan = make_plan(graph, options.int8_io);
  std::vector<RangeObserver> observers(graph.value_capacity());
  std::vector<bool> wanted = plan.quantized;
  for (const auto& [v, _] : plan.share_of) wanted[v] = false;  // parameters come from the input
  // Percentile: the first pass finds min/max, the second fills histograms over that range.
  const int passes = observer == QuantObserver::Percentile ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    if (pass == 1) {
      for (RangeObserver& o : observers) o.start_histogram();
    }
    run_calibration(
        graph, options.calibration, wanted,
        [&](ir::ValueId v, std::span<const float> x) {
          pass == 0 ? observers[v].observe(x) : observers[v].observe_histogram(x);
        },
        [&](size_t done, size_t total) {
          if (options.progress) options.progress(pass + 1, passes, done, total);
        });
  }

  // Parameters in topological order, so shared values find their source's.
  std::map<ir::ValueId, QParams> params;
  auto params_of = [&](ir::ValueId v) -> const QParams* {
    auto it = params.find(v);
    return it == params.end() ? nullptr : &it->second;
  };
  std::vector<ir::ValueId> order(graph.inputs().begin(), graph.inputs().end());
  for (ir::NodeId id : graph.nodes()) {
    for (ir::ValueId v : graph.node(id).outputs) {
      if (v != ir::kNoValue) order.push_back(v);
    }
  }
  for (ir::ValueId v : order) {
    if (!plan.quantized[v]) continue;
    auto shared = plan.share_of.find(v);
    if (shared != plan.share_of.end() && params_of(shared->second)) {
      params[v] = *params_of(shared->second);
      continue;
    }
    const ir::Value& value = graph.value(v);
    if (options.scheme == QuantScheme::CortexM && value.producer != ir::kNoNode &&
        ir::any_overload_of(graph.node(value.producer), {ops::aten::_softmax})) {
      // Softmax outputs lie in [0, 1]: fixed qparams (scale 1/256, zero point -128), as TFLite
      // and CMSIS-NN's arm_softmax_s8 produce, so the Cortex-M lowering can take the op.
      params[v] = QParams{1.0 / 256.0, -128, -128, 127};
      continue;
    }
    const RangeObserver& o = observers[v];
    const auto [lo, hi] = observer == QuantObserver::MinMax
                              ? std::pair{o.min(), o.max()}
                              : o.percentile_range(options.percentile);
    params[v] = affine_qparams(lo, hi);
  }

  Rewriter rewriter(graph, options);
  const bool int32_bias = options.scheme != QuantScheme::Xnnpack;
  for (ir::NodeId id : plan.weighted) {
    report.weight_bytes +=
        rewriter.quantize_weights(id, params_of(graph.node(id).arg("input").tensor()), int32_bias);
  }
  const std::vector<ir::ValueId> inputs = graph.inputs(), outputs = graph.outputs();
  for (ir::ValueId v : order) {
    if (!plan.quantized[v]) continue;
    rewriter.quantize_activation(v, params[v]);
    ++report.quantized_values;
  }
  report.quantized_ops = plan.ops;
  if (options.int8_io) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (const QParams* q = params_of(inputs[i]))
        report.inputs.push_back({graph.value(inputs[i]).name, i, *q});
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (const QParams* q = params_of(outputs[i]))
        report.outputs.push_back({graph.value(outputs[i]).name, i, *q});
    }
  }
  graph.verify();

  char line[256];
  std::snprintf(
      line, sizeof(line),
      "quantize: %s, %s observer, %zu sample(s): %zu op(s) int8, %zu activation(s) quantized, "
      "%.1f KiB of int8/int32 weights",
      report.scheme.c_str(), report.observer.c_str(), report.samples, report.quantized_ops,
      report.quantized_values, report.weight_bytes / 1024.0);
  report.lines.push_back(line);
  for (const QuantizedIo& io : report.inputs) {
    report.lines.push_back("  int8 input " + std::to_string(io.index) + " ('" + io.name +
                           "'): " + format_qparams(io.qparams));
  }
  for (const QuantizedIo& io : report.outputs) {
    report.lines.push_back("  int8 output " + std::to_string(io.index) + " ('" + io.name +
                           "'): " + format_qparams(io.qparams));
  }
  return report;
}

}  // namespace pteron::compiler
